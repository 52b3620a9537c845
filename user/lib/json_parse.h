/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small strict JSON parser (RFC 8259): one text -> a tree of values.
 *
 * Strict means: exactly one value, surrounded by optional whitespace; no
 * comments, trailing commas, leading zeros, NaN/Infinity, single quotes,
 * raw control bytes or invalid UTF-8 in strings, lone surrogates in \u
 * escapes, or duplicate keys in an object (lookup by key would otherwise
 * be ambiguous). Nesting is capped at JSON_MAX_DEPTH so hostile input
 * cannot exhaust the stack.
 *
 * Numbers: an integer literal (no fraction, no exponent) that fits int64
 * is JSON_INT, one above INT64_MAX that fits uint64 is JSON_UINT, so
 * nanosecond timestamps and counters come back exact. Anything else
 * (fractions, exponents, integers beyond 64 bits) is JSON_DOUBLE; a value
 * beyond the double range is an error. */
#ifndef KMON_JSON_PARSE_H
#define KMON_JSON_PARSE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 128

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_INT, /* fits int64_t: v.i */
	JSON_UINT, /* > INT64_MAX, fits uint64_t: v.u */
	JSON_DOUBLE,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_member;

struct json_value {
	enum json_type type;
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct {
			char *s; /* UTF-8, NUL-terminated; may hold \u0000 */
			size_t len;
		} str;
		struct {
			struct json_value *items;
			size_t n;
		} arr;
		struct {
			struct json_member *members; /* in input order */
			size_t n;
		} obj;
	};
};

struct json_member {
	char *key; /* NUL-terminated */
	size_t key_len;
	struct json_value value;
};

struct json_error {
	size_t offset; /* byte offset into the text */
	size_t line, col; /* 1-based; col counts bytes */
	char msg[128];
};

/* Fills err for a failure at byte offset of text: line and column
 * counted, the message formatted (another reader of JSON reports as this
 * one does). */
void json__verror(struct json_error *err, const char *text, size_t offset,
		  const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Parses text[0..len) (need not be NUL-terminated). Returns the root, to
 * be freed with json__free(), or NULL with err filled in. */
struct json_value *json__parse(const char *text, size_t len,
			       struct json_error *err);
void json__free(struct json_value *v);

/* The member named key of an object; NULL when v is not an object or has
 * no such member. */
const struct json_value *json__get(const struct json_value *v, const char *key);
/* Typed reads: false when v is NULL or of another type or out of range.
 * json__u64 takes a non-negative JSON_INT or a JSON_UINT; json__i64 a
 * JSON_INT; json__double any number. */
bool json__u64(const struct json_value *v, uint64_t *out);
bool json__i64(const struct json_value *v, int64_t *out);
bool json__double(const struct json_value *v, double *out);
bool json__bool(const struct json_value *v, bool *out);
/* The string, or NULL when v is not a string. */
const char *json__str(const struct json_value *v);
/* "null", "a boolean", "an integer", "a number", "a string", ... */
const char *json__type_name(const struct json_value *v);

#endif
