// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Records in: each checked strictly; field readers and filters shared by
 * the subcommands; the finished picture out. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

void view__error(const char *where, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *input__name(const struct view_opts *o)
{
	if (o->brokers)
		return o->brokers;
	return strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
}

static bool kind_wanted(const char *const *kinds, const char *kind)
{
	for (; *kinds; kinds++)
		if (strcmp(*kinds, kind) == 0)
			return true;
	return false;
}

/* One record: must be a JSON object with a string "kind". */
int input__record(const char *line, size_t len, const char *where,
		  const char *const *kinds, view_record_fn fn, void *ctx)
{
	struct json_error err;
	struct json_value *rec = json__parse(line, len, &err);
	const char *kind;
	int ret = VIEW_BAD_INPUT;

	if (!rec) {
		view__error(where, "not JSON (column %zu): %s", err.col,
			    err.msg);
		return VIEW_BAD_INPUT;
	}
	if (rec->type != JSON_OBJECT) {
		view__error(where, "expected a JSON object, got %s",
			    json__type_name(rec));
		goto out;
	}
	kind = json__str(json__get(rec, "kind"));
	if (!kind) {
		view__error(where, "kind: %s",
			    json__get(rec, "kind") ? "expected a string" :
						     "missing");
		goto out;
	}
	ret = kind_wanted(kinds, kind) ? fn(rec, kind, where, ctx) : 0;
out:
	json__free(rec);
	return ret;
}

int input__message(const char *msg, size_t len, const char *where,
		   const char *const *kinds, view_record_fn fn, void *ctx)
{
	if (memchr(msg, '\0', len)) {
		view__error(where, "NUL byte in the message: not text");
		return VIEW_BAD_INPUT;
	}
	return input__record(msg, len, where, kinds, fn, ctx);
}

static int field__fail(const struct json_value *v, const char *kind,
		       const char *where, const char *key, const char *want)
{
	if (!v)
		view__error(where, "%s record: missing \"%s\"", kind, key);
	else
		view__error(where, "%s record: \"%s\": expected %s, got %s",
			    kind, key, want, json__type_name(v));
	return VIEW_BAD_INPUT;
}

int field__u64(const struct json_value *rec, const char *kind,
	       const char *where, const char *key, uint64_t *out)
{
	const struct json_value *v = json__get(rec, key);

	if (json__u64(v, out))
		return 0;
	return field__fail(v, kind, where, key, "a non-negative integer");
}

int field__outcomes(const struct json_value *rec, const char *kind,
		    const char *where, bool *has, uint64_t *outcomes,
		    uint64_t *errors)
{
	int ret;

	*outcomes = *errors = 0;
	*has = json__get(rec, "outcomes") != NULL;
	if (!*has)
		return 0;
	if ((ret = field__u64(rec, kind, where, "outcomes", outcomes)))
		return ret;
	return field__u64(rec, kind, where, "errors", errors);
}

int field__str(const struct json_value *rec, const char *kind,
	       const char *where, const char *key, const char **out)
{
	const struct json_value *v = json__get(rec, key);

	*out = json__str(v);
	if (*out)
		return 0;
	return field__fail(v, kind, where, key, "a string");
}

int field__str_or_null(const struct json_value *rec, const char *kind,
		       const char *where, const char *key, const char **out)
{
	const struct json_value *v = json__get(rec, key);

	*out = json__str(v);
	if (*out || (v && v->type == JSON_NULL))
		return 0;
	return field__fail(v, kind, where, key, "a string or null");
}

int field__array(const struct json_value *rec, const char *kind,
		 const char *where, const char *key,
		 const struct json_value **out)
{
	const struct json_value *v = json__get(rec, key);

	*out = v;
	if (v && v->type == JSON_ARRAY)
		return 0;
	return field__fail(v, kind, where, key, "an array");
}

const char *filter__suffix(const struct view_opts *o)
{
	return o->service || o->has_pid || o->has_from || o->has_to ?
		       " match the filters" :
		       "";
}

int filter__check(const struct view_opts *o, const struct json_value *rec,
		  const char *kind, const char *where, bool *keep)
{
	const char *node, *service;
	uint64_t ts, pid;
	int ret;

	*keep = false;
	ret = field__u64(rec, kind, where, "ts", &ts);
	if (!ret)
		ret = field__str(rec, kind, where, "node", &node);
	if (ret)
		return ret;
	if ((o->has_from && ts < o->from_ns) || (o->has_to && ts >= o->to_ns))
		return 0;
	if (o->service) {
		if (!json__get(rec, "service"))
			return 0;
		ret = field__str_or_null(rec, kind, where, "service", &service);
		if (ret)
			return ret;
		if (!service || strcmp(service, o->service) != 0)
			return 0;
	}
	if (o->has_pid) {
		if (!json__get(rec, "pid"))
			return 0;
		ret = field__u64(rec, kind, where, "pid", &pid);
		if (ret)
			return ret;
		if (pid != o->pid)
			return 0;
	}
	*keep = true;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int output__write(const struct view_opts *o, const struct strbuf *out)
{
	char tmp[4096];
	int fd, err;

	if (!o->output || strcmp(o->output, "-") == 0) {
		err = write_all(STDOUT_FILENO, out->buf ? out->buf : "",
				out->len);
		if (err) {
			view__error("stdout", "write failed: %s",
				    strerror(-err));
			return VIEW_RUNTIME;
		}
		return 0;
	}
	/* A reader of the output never sees half a picture. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", o->output, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		view__error(o->output, "cannot create: %s", strerror(errno));
		return VIEW_RUNTIME;
	}
	err = write_all(fd, out->buf ? out->buf : "", out->len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, o->output))
		err = -errno;
	if (err) {
		unlink(tmp);
		view__error(o->output, "write failed: %s", strerror(-err));
		return VIEW_RUNTIME;
	}
	return 0;
}
