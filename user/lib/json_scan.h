/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One JSON object read in a single pass for the members a reader names,
 * with no tree and no allocation: what a consumer does hundreds of
 * thousands of times a second (kmon-trace --fleet). json_parse.h builds
 * the whole tree instead.
 *
 * The text is checked as json_parse.h checks it (RFC 8259: one value,
 * strings of valid UTF-8 with no raw control bytes and valid escapes,
 * numbers without leading zeros, nesting at most JSON_MAX_DEPTH), with
 * two differences: the top value must be an object, and only the named
 * members are checked for duplicates (the others are skipped, not
 * kept). A member whose key is written with escapes is never one of the
 * named ones. */
#ifndef KMON_JSON_SCAN_H
#define KMON_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/json_parse.h"

#define JSON_SCAN_MAX_KEYS 64
#define JSON_SCAN_SLOTS 256 /* a power of two, 4 x JSON_SCAN_MAX_KEYS */

enum json_scan_type {
	JSON_SCAN_ABSENT,
	JSON_SCAN_NULL,
	JSON_SCAN_BOOL,
	JSON_SCAN_NUMBER,
	JSON_SCAN_STRING,
	JSON_SCAN_NESTED, /* an object or an array */
};

struct json_scan_value {
	enum json_scan_type type;
	bool b; /* JSON_SCAN_BOOL */
	/* JSON_SCAN_NUMBER: integer when written without fraction or
	 * exponent and its magnitude fits 64 bits (then in u, its sign in
	 * negative) */
	bool integer, negative;
	uint64_t u;
	/* JSON_SCAN_STRING: the bytes between the quotes, as written;
	 * escaped when they hold a backslash (json_scan__string decodes).
	 * JSON_SCAN_NESTED: s at its '{' or '[' */
	const char *s;
	size_t len;
	bool escaped;
};

/* The members a reader names, hashed once. */
struct json_scan_keys {
	const char *const *names;
	uint8_t lens[JSON_SCAN_MAX_KEYS];
	int n;
	uint8_t slots[JSON_SCAN_SLOTS]; /* index + 1; 0: empty */
};

/* n names at most JSON_SCAN_MAX_KEYS, each at most 255 bytes, distinct;
 * names must outlive k. */
void json_scan__keys(struct json_scan_keys *k, const char *const *names, int n);
/* Reads the object text[0..len) into vals[i] for names[i] (ABSENT when
 * it has no such member). Returns false with err filled in (as
 * json__parse fills it) when the text is not one JSON object. */
bool json_scan(const char *text, size_t len, const struct json_scan_keys *k,
	       struct json_scan_value *vals, struct json_error *err);

/* Typed reads, as json__u64 and json__i64 read: false for another type
 * or out of range. */
bool json_scan__u64(const struct json_scan_value *v, uint64_t *out);
bool json_scan__i64(const struct json_scan_value *v, int64_t *out);
/* A string value, decoded, NUL-terminated, into out (v->len + 1 bytes:
 * decoding never lengthens). Returns its length. */
size_t json_scan__string(const struct json_scan_value *v, char *out);
/* What v is, for a message, as json__type_name says it: "an integer",
 * "a string", ... */
const char *json_scan__type_name(const struct json_scan_value *v);

#endif
