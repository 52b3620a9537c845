/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one record model all collectors share. A record is built field by
 * field and encoded to JSON as it is built, so it is encoded exactly once;
 * every sink ships the same bytes. */
#ifndef KMON_RECORD_H
#define KMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/strbuf.h"

#define RECORD_KIND_MAX 16
#define RECORD_KEY_MAX 64

struct record {
	char kind[RECORD_KIND_MAX];
	/* Kafka message key: the service, or the pid when there is none. */
	char key[RECORD_KEY_MAX];
	/* The node record__begin was given: the caller's string, valid while
	 * the record is being sent (sinks use it for the Kafka header). */
	const char *node;
	struct strbuf json; /* one JSON object, no trailing newline */
	int depth; /* open nested objects and arrays */
	bool need_comma;
};

void record__init(struct record *r);
void record__free(struct record *r);

/* Starts a record: {"kind":..,"ts":..,"node":.. */
void record__begin(struct record *r, const char *kind, uint64_t ts_ns,
		   const char *node);
/* pid, comm and service (null when service is NULL); sets the key. */
void record__process(struct record *r, uint32_t pid, const char *comm,
		     const char *service);
/* Fields: name is one of kmond's own field names (copied unescaped;
 * NULL inside an array), the value any string or number. The common ones
 * are inline, so a literal name's length is known when compiling. */

/* Opens a field: the comma, then "name": unless name is NULL (an array
 * item). Returns where its value goes, with room for extra bytes. */
static inline char *record__key(struct record *r, const char *name,
				size_t extra)
{
	size_t n = name ? strlen(name) : 0;
	char *p = strbuf__room(&r->json, n + 4 + extra);

	if (r->need_comma)
		*p++ = ',';
	r->need_comma = true;
	if (name) {
		*p++ = '"';
		memcpy(p, name, n);
		p += n;
		*p++ = '"';
		*p++ = ':';
	}
	return p;
}

static inline void record__strn(struct record *r, const char *name,
				const char *val, size_t len)
{
	char *p = record__key(r, name, val ? STRBUF_JSON_STR_MAX(len) : 4);

	if (val) {
		p = strbuf__put_json_str(p, val, len);
	} else {
		memcpy(p, "null", 4);
		p += 4;
	}
	strbuf__done(&r->json, p);
}

static inline void record__str(struct record *r, const char *name,
			       const char *val)
{
	record__strn(r, name, val, val ? strlen(val) : 0);
}

/* A string written in place by the caller, up to max bytes that JSON
 * takes as they are (digits, hex, addresses): where to write them, then
 * record__plain_end() with where they end. No escaping to check. */
static inline char *record__plain_begin(struct record *r, const char *name,
					size_t max)
{
	char *p = record__key(r, name, max + 2);

	*p = '"';
	return p + 1;
}

static inline void record__plain_end(struct record *r, char *end)
{
	*end = '"';
	strbuf__done(&r->json, end + 1);
}

/* Fields as record__ calls encoded them for another record at the same
 * place (after the same kind of field, or first alike): their text, as it
 * is (the caller keeps r->key in step). json is a buffer of
 * RECORD_ENCODED_MAX bytes, len of them the fields, and it is copied
 * whole: a copy of a fixed size is a few vector moves, where one of len
 * bytes compiled to a rep movs, whose start-up was 7% of kmond's time at
 * a tcp record per request (it is called for every one). */
#define RECORD_ENCODED_MAX 128

static inline void record__encoded(struct record *r,
				   const char json[RECORD_ENCODED_MAX],
				   size_t len)
{
	char *p = strbuf__room(&r->json, RECORD_ENCODED_MAX);

	memcpy(p, json, RECORD_ENCODED_MAX);
	strbuf__done(&r->json, p + len);
	r->need_comma = true;
}

static inline void record__u64(struct record *r, const char *name, uint64_t val)
{
	strbuf__done(&r->json,
		     strbuf__put_u64(record__key(r, name, STRBUF_U64_MAX),
				     val));
}

void record__i64(struct record *r, const char *name, int64_t val);
void record__double(struct record *r, const char *name, double val);
void record__bool(struct record *r, const char *name, bool val);
void record__null(struct record *r, const char *name);
void record__object_begin(struct record *r, const char *name);
void record__object_end(struct record *r);
void record__array_begin(struct record *r, const char *name);
void record__array_str(struct record *r, const char *val); /* array item */
void record__array_end(struct record *r);
/* Closes the record; r->json then holds the finished object. */
void record__end(struct record *r);

#endif
