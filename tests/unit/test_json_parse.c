// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The strict JSON parser: every value type, exact 64-bit integers, string
 * escapes and UTF-8, lookup by key, and the rejections with their line:col
 * (including records written by kmond's own encoder, parsed back). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_parse.h"
#include "lib/record.h"
#include "unit.h"

static struct json_value *parse(const char *s)
{
	return json__parse(s, strlen(s), NULL);
}

/* Parses s, expecting a failure; returns "line:col: msg". */
static const char *parse_error(const char *s, size_t len)
{
	static char buf[200];
	struct json_error err;
	struct json_value *v = json__parse(s, len, &err);

	if (v) {
		json__free(v);
		return "(parsed)";
	}
	snprintf(buf, sizeof(buf), "%zu:%zu: %s", err.line, err.col, err.msg);
	return buf;
}

#define ERR(s) parse_error(s, strlen(s))

static void test_scalars(void)
{
	struct json_value *v;
	uint64_t u;
	int64_t i;
	double d;
	bool b;

	v = parse(" null ");
	CHECK(v && v->type == JSON_NULL);
	json__free(v);
	v = parse("true");
	CHECK(json__bool(v, &b) && b);
	json__free(v);
	v = parse("false");
	CHECK(json__bool(v, &b) && !b);
	json__free(v);

	v = parse("0");
	CHECK(v && v->type == JSON_INT && json__u64(v, &u) && u == 0);
	json__free(v);
	v = parse("-0");
	CHECK(json__i64(v, &i) && i == 0);
	json__free(v);
	/* nanosecond timestamps and counters stay exact */
	v = parse("1795335771653050451");
	CHECK(json__u64(v, &u) && u == 1795335771653050451ULL);
	json__free(v);
	v = parse("9223372036854775807");
	CHECK(v && v->type == JSON_INT && v->i == INT64_MAX);
	json__free(v);
	v = parse("9223372036854775808");
	CHECK(v && v->type == JSON_UINT && json__u64(v, &u) &&
	      u == 9223372036854775808ULL);
	CHECK(!json__i64(v, &i));
	json__free(v);
	v = parse("18446744073709551615");
	CHECK(json__u64(v, &u) && u == UINT64_MAX);
	json__free(v);
	v = parse("-9223372036854775808");
	CHECK(json__i64(v, &i) && i == INT64_MIN);
	CHECK(!json__u64(v, &u));
	json__free(v);
	v = parse("-42");
	CHECK(json__i64(v, &i) && i == -42 && !json__u64(v, &u));
	json__free(v);
	/* past 64 bits: a double, not a wrapped integer */
	v = parse("18446744073709551616");
	CHECK(v && v->type == JSON_DOUBLE && v->d == 18446744073709551616.0);
	CHECK(!json__u64(v, &u));
	json__free(v);
	v = parse("-9223372036854775809");
	CHECK(v && v->type == JSON_DOUBLE);
	json__free(v);

	v = parse("1.5");
	CHECK(v && v->type == JSON_DOUBLE && json__double(v, &d) && d == 1.5);
	CHECK(!json__u64(v, &u));
	json__free(v);
	v = parse("-2.5e-3");
	CHECK(json__double(v, &d) && d == -2.5e-3);
	json__free(v);
	v = parse("1E2");
	CHECK(v && v->type == JSON_DOUBLE && v->d == 100.0);
	json__free(v);
	v = parse("7");
	CHECK(json__double(v, &d) && d == 7.0);
	json__free(v);
}

static void test_strings(void)
{
	struct json_value *v;

	v = parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
	CHECK_STR(json__str(v), "a\"b\\c/d\b\f\n\r\t");
	json__free(v);
	/* \u escapes: ASCII, 2 and 3 byte forms, a surrogate pair, NUL */
	v = parse("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"");
	CHECK_STR(json__str(v), "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	json__free(v);
	v = parse("\"a\\u0000b\"");
	CHECK(v && v->type == JSON_STRING && v->str.len == 3 &&
	      memcmp(v->str.s, "a\0b", 3) == 0);
	json__free(v);
	/* raw UTF-8 passes through */
	v = parse("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	CHECK_STR(json__str(v), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	json__free(v);
	v = parse("\"\"");
	CHECK(v && v->type == JSON_STRING && v->str.len == 0);
	CHECK_STR(json__str(v), "");
	json__free(v);
	v = parse("12");
	CHECK(json__str(v) == NULL);
	json__free(v);
}

static void test_containers(void)
{
	struct json_value *v;
	const struct json_value *a, *o;
	uint64_t u;

	v = parse("{\"kind\":\"offcpu\",\"ts\":1700000000000000000,"
		  "\"service\":null,\"stack\":[\"schedule+0x1\",\"main+0x9\"],"
		  "\"nested\":{\"x\":[[],{}],\"y\":true}}");
	CHECK(v && v->type == JSON_OBJECT && v->obj.n == 5);
	CHECK_STR(json__str(json__get(v, "kind")), "offcpu");
	CHECK(json__u64(json__get(v, "ts"), &u) && u == 1700000000000000000ULL);
	CHECK(json__get(v, "service") &&
	      json__get(v, "service")->type == JSON_NULL);
	CHECK(json__get(v, "missing") == NULL);
	CHECK(json__get(json__get(v, "kind"), "x") == NULL);
	a = json__get(v, "stack");
	CHECK(a && a->type == JSON_ARRAY && a->arr.n == 2);
	if (a && a->arr.n == 2) {
		CHECK_STR(json__str(&a->arr.items[0]), "schedule+0x1");
		CHECK_STR(json__str(&a->arr.items[1]), "main+0x9");
	}
	o = json__get(v, "nested");
	a = json__get(o, "x");
	CHECK(a && a->arr.n == 2 && a->arr.items[0].type == JSON_ARRAY &&
	      a->arr.items[0].arr.n == 0 &&
	      a->arr.items[1].type == JSON_OBJECT &&
	      a->arr.items[1].obj.n == 0);
	/* members keep input order */
	CHECK_STR(v->obj.members[0].key, "kind");
	CHECK_STR(v->obj.members[4].key, "nested");
	json__free(v);

	v = parse(" [ 1 , [ 2 , 3 ] , \"x\" ]\n");
	CHECK(v && v->type == JSON_ARRAY && v->arr.n == 3 &&
	      v->arr.items[1].arr.n == 2);
	json__free(v);
	json__free(NULL); /* NULL-safe */
}

static void test_errors(void)
{
	char deep[JSON_MAX_DEPTH + 2];

	CHECK_STR(ERR(""), "1:1: expected a value, got end of input");
	CHECK_STR(ERR("   \n  "), "2:3: expected a value, got end of input");
	CHECK_STR(ERR("{\"a\":1,}"),
		  "1:8: expected a string key in an object, got '}'");
	CHECK_STR(ERR("[1,]"), "1:4: expected a value, got ']'");
	CHECK_STR(ERR("[1 2]"),
		  "1:4: expected ',' or ']' in an array, got '2'");
	CHECK_STR(ERR("{\"a\" 1}"),
		  "1:6: expected ':' after an object key, got '1'");
	CHECK_STR(ERR("{\"a\":1 \"b\":2}"),
		  "1:8: expected ',' or '}' in an object, got '\"'");
	CHECK_STR(ERR("{\"a\":1,\n\"a\":2}"), "2:1: duplicate key \"a\"");
	CHECK_STR(ERR("{} x"),
		  "1:4: expected end of input after the value, got 'x'");
	CHECK_STR(ERR("{}{}"),
		  "1:3: expected end of input after the value, got '{'");
	CHECK_STR(ERR("nul"), "1:1: expected a value, got 'n'");
	CHECK_STR(ERR("True"), "1:1: expected a value, got 'T'");
	CHECK_STR(ERR("NaN"), "1:1: expected a value, got 'N'");
	CHECK_STR(ERR("'a'"), "1:1: expected a value, got '''");
	CHECK_STR(ERR("// c\n1"), "1:1: expected a value, got '/'");
	CHECK_STR(ERR("01"), "1:1: leading zero in a number");
	CHECK_STR(ERR("-"), "1:2: expected a digit, got end of input");
	CHECK_STR(ERR("+1"), "1:1: expected a value, got '+'");
	CHECK_STR(ERR("1."),
		  "1:3: expected a digit after '.', got end of input");
	CHECK_STR(ERR(".5"), "1:1: expected a value, got '.'");
	CHECK_STR(ERR("1e"),
		  "1:3: expected a digit in the exponent, got end of input");
	CHECK_STR(ERR("1e999"), "1:1: number out of range");
	CHECK_STR(ERR("\"abc"), "1:1: unterminated string");
	CHECK_STR(ERR("\"a\\"), "1:1: unterminated string");
	CHECK_STR(ERR("\"a\tb\""),
		  "1:3: control byte 0x09 in a string (escape it)");
	CHECK_STR(ERR("\"\\x\""), "1:2: invalid escape \\'x'");
	CHECK_STR(ERR("\"\\u12\""),
		  "1:2: invalid \\u escape: expected 4 hex digits");
	CHECK_STR(
		ERR("\"\\ud800\""),
		"1:2: high surrogate \\ud800 not followed by a low surrogate");
	CHECK_STR(
		ERR("\"\\ud800\\u0041\""),
		"1:2: high surrogate \\ud800 not followed by a low surrogate");
	CHECK_STR(ERR("\"\\udc00\""), "1:2: lone low surrogate \\udc00");
	CHECK_STR(ERR("\"a\xff\""), "1:3: invalid UTF-8 in a string");
	CHECK_STR(ERR("\"\xc0\xaf\""), "1:2: invalid UTF-8 in a string");
	CHECK_STR(ERR("\"\xed\xa0\x80\""), "1:2: invalid UTF-8 in a string");
	CHECK_STR(ERR("\"\xf4\x90\x80\x80\""),
		  "1:2: invalid UTF-8 in a string");
	CHECK_STR(ERR("\"\xe2\x82\""), "1:2: invalid UTF-8 in a string");
	CHECK_STR(parse_error("1\0", 2),
		  "1:2: expected end of input after the value, got byte 0x00");

	memset(deep, '[', sizeof(deep));
	CHECK_STR(parse_error(deep, sizeof(deep)),
		  "1:129: nesting deeper than 128");
	/* exactly the limit parses */
	{
		char ok[2 * JSON_MAX_DEPTH];
		struct json_value *v;

		memset(ok, '[', JSON_MAX_DEPTH);
		memset(ok + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
		v = json__parse(ok, sizeof(ok), NULL);
		CHECK(v != NULL);
		json__free(v);
	}
}

/* Text not NUL-terminated: the parser must stop at len. */
static void test_length_bound(void)
{
	const char text[] = "123456";
	struct json_value *v = json__parse(text, 3, NULL);
	uint64_t u;

	CHECK(json__u64(v, &u) && u == 123);
	json__free(v);
	v = json__parse("1.25xyz", 4, NULL);
	CHECK(v && v->type == JSON_DOUBLE && v->d == 1.25);
	json__free(v);
}

/* Whatever kmond's encoder writes, the parser reads back unchanged:
 * awkward comms (quotes, control bytes, invalid UTF-8) included. */
static void test_round_trip(void)
{
	static const char *const comms[] = { "nginx", "a\"b\\c", "t\x01\n",
					     "x\xffy", "\xc3\xa9t\xc3\xa9" };
	struct record r;
	size_t i;

	record__init(&r);
	for (i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
		struct json_value *v;
		uint64_t u;

		record__begin(&r, "offcpu", 1700000000123456789ULL, "vm");
		record__process(&r, 4242, comms[i], NULL);
		record__array_begin(&r, "stack");
		record__array_str(&r, "schedule+0x2a");
		record__array_end(&r);
		record__u64(&r, "total_ns", UINT64_MAX);
		record__end(&r);
		v = json__parse(r.json.buf, r.json.len, NULL);
		CHECK(v != NULL);
		CHECK(json__u64(json__get(v, "ts"), &u) &&
		      u == 1700000000123456789ULL);
		CHECK(json__u64(json__get(v, "total_ns"), &u) &&
		      u == UINT64_MAX);
		CHECK(json__u64(json__get(v, "pid"), &u) && u == 4242);
		/* valid UTF-8 comes back byte for byte */
		if (i != 3)
			CHECK_STR(json__str(json__get(v, "comm")), comms[i]);
		else /* the encoder maps byte 0xff to U+00FF */
			CHECK_STR(json__str(json__get(v, "comm")),
				  "x\xc3\xbfy");
		json__free(v);
	}
	record__free(&r);
}

int main(void)
{
	test_scalars();
	test_strings();
	test_containers();
	test_errors();
	test_length_bound();
	test_round_trip();
	return unit_done("json_parse");
}
