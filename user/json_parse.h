/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small, strict JSON parser (RFC 8259) for the tools that read kmond's
 * records back (kmon-topo, kmon-view). One call parses one document (one
 * record line) into a tree owned by a struct json; values are looked up by
 * member name or by a dotted path ("lost.queue", "stack.0").
 *
 * Strict: exactly one value with only whitespace around it; no comments,
 * trailing commas, single quotes, NaN, leading zeros or '+'; strings must
 * be valid UTF-8 with no raw control characters, escapes are checked and
 * \u surrogate pairs decoded (lone surrogates refused); nesting is limited
 * to JSON_MAX_DEPTH. Duplicate member names are kept; lookups return the
 * first. Integers are kept exact (json__u64/json__i64 read the digits, not
 * a double), so nanosecond timestamps survive.
 *
 *	struct json *doc;
 *	uint64_t n;
 *	if (json__parse(&doc, line, len, err, sizeof(err)))
 *		... err says where and why ...
 *	if (json__get_u64(json__root(doc), "requests", &n) == 0) ...
 *	json__free(doc);
 */
#ifndef KMON_JSON_PARSE_H
#define KMON_JSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_type type;
	/* The member name when this value is in an object (decoded,
	 * NUL-terminated), else NULL. */
	const char *key;
	struct json_value *next; /* next element or member, in order */
	union {
		bool boolean;
		struct {
			const char *text; /* the number as written, NUL-terminated */
			double value;
			bool integer; /* no fraction, no exponent */
		} num;
		struct {
			const char *ptr; /* decoded UTF-8, NUL-terminated */
			size_t len;      /* may hold NULs (from \u0000) */
		} str;
		struct {
			struct json_value *first; /* elements or members */
			size_t count;
		} list;
	};
};

struct json;

/* Parses text[0..len). Returns 0 and *out, or -EINVAL with
 * "at byte N: why" in err (-ENOMEM when memory ran out). */
int json__parse(struct json **out, const char *text, size_t len, char *err,
		size_t errlen);
const struct json_value *json__root(const struct json *doc);
void json__free(struct json *doc); /* NULL-safe */

/* The first member of object obj named key; NULL when obj is not an
 * object or has no such member. */
const struct json_value *json__member(const struct json_value *obj,
				      const char *key);
/* Element i of an array; NULL when out of range or not an array. */
const struct json_value *json__index(const struct json_value *arr,
				     size_t i);
/* Walks a dotted path of member names and array indexes: "a.b.0.c".
 * An empty path is v itself. NULL when any step is missing. */
const struct json_value *json__lookup(const struct json_value *v,
				      const char *path);

/* Typed reads of one value. Return 0, or -1 when v is NULL or of another
 * type (for integers: not an integer, or out of range). */
int json__string(const struct json_value *v, const char **out);
int json__u64(const struct json_value *v, uint64_t *out);
int json__i64(const struct json_value *v, int64_t *out);
int json__double(const struct json_value *v, double *out);
int json__bool(const struct json_value *v, bool *out);
bool json__is_null(const struct json_value *v);

/* The same, by path from v (json__lookup + the typed read). */
int json__get_string(const struct json_value *v, const char *path,
		     const char **out);
int json__get_u64(const struct json_value *v, const char *path,
		  uint64_t *out);
int json__get_i64(const struct json_value *v, const char *path,
		  int64_t *out);
int json__get_double(const struct json_value *v, const char *path,
		     double *out);
int json__get_bool(const struct json_value *v, const char *path, bool *out);

const char *json__type_name(enum json_type type);

#endif
