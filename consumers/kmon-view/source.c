// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where records come from: JSON lines from a file or stdin, one record per
 * line, or Kafka (kafka_in.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

static bool is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

static int input__read_file(const struct view_opts *o, const char *const *kinds,
			    view_record_fn fn, void *ctx)
{
	const char *name = input__name(o);
	FILE *f = strcmp(o->input, "-") == 0 ? stdin : fopen(o->input, "r");
	unsigned long lineno = 0, records = 0;
	char *line = NULL, where[4096];
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	if (!f) {
		view__error(name, "cannot open: %s", strerror(errno));
		return VIEW_BAD_INPUT;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (is_blank(line, (size_t)len))
			continue;
		records++;
		/* errors at the end of a line point at its last column */
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		snprintf(where, sizeof(where), "%s:%lu", name, lineno);
		if (memchr(line, '\0', (size_t)len)) {
			view__error(where, "NUL byte in the line: not text");
			ret = VIEW_BAD_INPUT;
			break;
		}
		ret = input__record(line, (size_t)len, where, kinds, fn, ctx);
		if (ret)
			break;
	}
	if (!ret && ferror(f)) {
		view__error(name, "read error: %s", strerror(errno));
		ret = VIEW_BAD_INPUT;
	}
	if (!ret && !records) {
		view__error(name, "empty input: no records");
		ret = VIEW_BAD_INPUT;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

int input__read(const struct view_opts *o, const char *const *kinds,
		view_record_fn fn, void *ctx)
{
	if (o->brokers)
		return input__read_kafka(o, kinds, fn, ctx);
	return input__read_file(o, kinds, fn, ctx);
}
