// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/record.h"

void record__init(struct record *r)
{
	memset(r, 0, sizeof(*r));
}

void record__free(struct record *r)
{
	strbuf__free(&r->json);
}

/* Field names are kmond's own identifiers: nothing in them needs
 * escaping, so they are copied as they are. */
static void record__name(struct record *r, const char *name)
{
	char buf[64];
	size_t len = 0, n;

	if (r->need_comma)
		buf[len++] = ',';
	r->need_comma = true;
	if (name) {
		n = strnlen(name, sizeof(buf) - 4);
		assert(n < sizeof(buf) - 4); /* names are short literals */
		buf[len++] = '"';
		memcpy(buf + len, name, n);
		len += n;
		buf[len++] = '"';
		buf[len++] = ':';
	}
	if (len) /* not the first item of an array */
		strbuf__add(&r->json, buf, len);
}

/* snprintf(dst, size, "%s", src) without printf's machinery (a record
 * is built per request). */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void record__begin(struct record *r, const char *kind, uint64_t ts_ns,
		   const char *node)
{
	strbuf__reset(&r->json);
	copy_str(r->kind, sizeof(r->kind), kind);
	r->key[0] = '\0';
	r->node = node;
	r->depth = 0;
	r->need_comma = false;
	strbuf__addc(&r->json, '{');
	record__str(r, "kind", kind);
	record__u64(r, "ts", ts_ns);
	record__str(r, "node", node);
}

void record__process(struct record *r, uint32_t pid, const char *comm,
		     const char *service)
{
	record__u64(r, "pid", pid);
	record__str(r, "comm", comm);
	record__str(r, "service", service);
	if (service)
		copy_str(r->key, sizeof(r->key), service);
	else
		snprintf(r->key, sizeof(r->key), "%u", pid);
}

void record__strn(struct record *r, const char *name, const char *val,
		  size_t len)
{
	record__name(r, name);
	if (val)
		strbuf__add_json_str(&r->json, val, len);
	else
		strbuf__adds(&r->json, "null");
}

void record__str(struct record *r, const char *name, const char *val)
{
	record__strn(r, name, val, val ? strlen(val) : 0);
}

void record__u64(struct record *r, const char *name, uint64_t val)
{
	record__name(r, name);
	strbuf__add_u64(&r->json, val);
}

void record__i64(struct record *r, const char *name, int64_t val)
{
	record__name(r, name);
	if (val < 0)
		strbuf__addc(&r->json, '-');
	/* -(val + 1) + 1: INT64_MIN has no positive int64_t */
	strbuf__add_u64(&r->json, val < 0 ? (uint64_t)-(val + 1) + 1 :
					    (uint64_t)val);
}

void record__double(struct record *r, const char *name, double val)
{
	record__name(r, name);
	/* JSON has no NaN or infinity. */
	if (isfinite(val))
		strbuf__addf(&r->json, "%.6g", val);
	else
		strbuf__adds(&r->json, "null");
}

void record__bool(struct record *r, const char *name, bool val)
{
	record__name(r, name);
	strbuf__adds(&r->json, val ? "true" : "false");
}

void record__null(struct record *r, const char *name)
{
	record__name(r, name);
	strbuf__adds(&r->json, "null");
}

static void record__open(struct record *r, const char *name, char bracket)
{
	record__name(r, name);
	strbuf__addc(&r->json, bracket);
	r->need_comma = false;
	r->depth++;
}

static void record__close(struct record *r, char bracket)
{
	strbuf__addc(&r->json, bracket);
	r->need_comma = true;
	r->depth--;
}

void record__object_begin(struct record *r, const char *name)
{
	record__open(r, name, '{');
}

void record__object_end(struct record *r)
{
	record__close(r, '}');
}

void record__array_begin(struct record *r, const char *name)
{
	record__open(r, name, '[');
}

void record__array_str(struct record *r, const char *val)
{
	record__str(r, NULL, val);
}

void record__array_end(struct record *r)
{
	record__close(r, ']');
}

void record__end(struct record *r)
{
	strbuf__addc(&r->json, '}');
}
