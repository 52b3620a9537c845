// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
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
		*strbuf__put_u64(r->key, pid) = '\0';
}

/* The field's name alone, for the values appended after it. */
static void record__name(struct record *r, const char *name)
{
	strbuf__done(&r->json, record__key(r, name, 0));
}

void record__i64(struct record *r, const char *name, int64_t val)
{
	char *p = record__key(r, name, 1 + STRBUF_U64_MAX);

	if (val < 0)
		*p++ = '-';
	/* -(val + 1) + 1: INT64_MIN has no positive int64_t */
	p = strbuf__put_u64(p, val < 0 ? (uint64_t) - (val + 1) + 1 :
					 (uint64_t)val);
	strbuf__done(&r->json, p);
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
