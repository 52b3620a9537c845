// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The strict JSON parser: kmond's own records read back exactly,
 * integers kept exact, strings decoded (escapes, surrogates, UTF-8),
 * everything RFC 8259 forbids refused with the column, lookups by path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"
#include "record.h"
#include "unit.h"

static char err[256];

static struct json *parse(const char *text)
{
	struct json *doc = NULL;

	err[0] = '\0';
	if (json__parse(&doc, text, strlen(text), err, sizeof(err)))
		return NULL;
	return doc;
}

/* The error for text, or "ok" when it parses. */
static const char *error_of(const char *text)
{
	struct json *doc = parse(text);

	if (!doc)
		return err;
	json__free(doc);
	return "ok";
}

/* What kmond writes, the parser reads back field for field. */
static void test_record_roundtrip(void)
{
	const struct json_value *root;
	struct record r;
	struct json *doc;
	const char *s;
	uint64_t u;
	int64_t i;
	double d;
	bool b;

	record__init(&r);
	record__begin(&r, "topology", 1795335771653050451ULL, "node-\"1\"");
	record__process(&r, 4242, "a\tb\\c", NULL);
	record__str(&r, "src", "fr\xc3\xa9ntend"); /* é */
	record__str(&r, "bad", "x\xff" "y\x01");   /* escaped by kmond */
	record__u64(&r, "max", UINT64_MAX);
	record__i64(&r, "neg", INT64_MIN);
	record__double(&r, "ratio", 0.25);
	record__bool(&r, "up", true);
	record__object_begin(&r, "lost");
	record__u64(&r, "queue", 3);
	record__object_end(&r);
	record__array_begin(&r, "stack");
	record__array_str(&r, "tcp_v4_rcv+0x1a");
	record__array_str(&r, "ip_local_deliver+0x5");
	record__array_end(&r);
	record__end(&r);

	doc = parse(r.json.buf);
	CHECK(doc != NULL);
	if (!doc) {
		fprintf(stderr, "  %s\n  %s\n", err, r.json.buf);
		record__free(&r);
		return;
	}
	root = json__root(doc);
	CHECK(root->type == JSON_OBJECT);
	CHECK(json__get_string(root, "kind", &s) == 0);
	CHECK_STR(s, "topology");
	CHECK(json__get_u64(root, "ts", &u) == 0);
	CHECK(u == 1795335771653050451ULL); /* beyond a double's 53 bits */
	CHECK(json__get_string(root, "node", &s) == 0);
	CHECK_STR(s, "node-\"1\"");
	CHECK(json__get_u64(root, "pid", &u) == 0 && u == 4242);
	CHECK(json__get_string(root, "comm", &s) == 0);
	CHECK_STR(s, "a\tb\\c");
	CHECK(json__is_null(json__member(root, "service")));
	CHECK(json__get_string(root, "service", &s) == -1);
	CHECK(json__get_string(root, "src", &s) == 0);
	CHECK_STR(s, "fr\xc3\xa9ntend");
	/* kmond escapes 0xff as \u00ff: it reads back as U+00FF. */
	CHECK(json__get_string(root, "bad", &s) == 0);
	CHECK_STR(s, "x\xc3\xbfy\x01");
	CHECK(json__get_u64(root, "max", &u) == 0 && u == UINT64_MAX);
	CHECK(json__get_i64(root, "neg", &i) == 0 && i == INT64_MIN);
	CHECK(json__get_u64(root, "neg", &u) == -1);
	CHECK(json__get_double(root, "ratio", &d) == 0 && d == 0.25);
	CHECK(json__get_u64(root, "ratio", &u) == -1);
	CHECK(json__get_bool(root, "up", &b) == 0 && b);
	CHECK(json__get_u64(root, "lost.queue", &u) == 0 && u == 3);
	CHECK(json__get_string(root, "stack.1", &s) == 0);
	CHECK_STR(s, "ip_local_deliver+0x5");
	CHECK(json__lookup(root, "stack.2") == NULL);
	CHECK(json__lookup(root, "stack.x") == NULL);
	CHECK(json__lookup(root, "lost.queue.deeper") == NULL);
	CHECK(json__lookup(root, "nope") == NULL);
	CHECK(json__lookup(root, "") == root);
	CHECK(json__member(root, "lost")->list.count == 1);
	json__free(doc);
	record__free(&r);
}

static void test_numbers(void)
{
	const struct json_value *v;
	struct json *doc;
	uint64_t u;
	int64_t i;
	double d;

	doc = parse("[0, -0, 18446744073709551615, 18446744073709551616, "
		    "-9223372036854775808, -9223372036854775809, "
		    "9223372036854775807, 1.5e3, 2E-2, -0.5]");
	CHECK(doc != NULL);
	if (!doc)
		return;
	v = json__root(doc);
	CHECK(v->list.count == 10);
	CHECK(json__u64(json__index(v, 0), &u) == 0 && u == 0);
	CHECK(json__u64(json__index(v, 1), &u) == 0 && u == 0);
	CHECK(json__u64(json__index(v, 2), &u) == 0 && u == UINT64_MAX);
	CHECK(json__u64(json__index(v, 3), &u) == -1); /* 2^64 */
	CHECK(json__double(json__index(v, 3), &d) == 0 && d > 1.8e19);
	CHECK(json__i64(json__index(v, 4), &i) == 0 && i == INT64_MIN);
	CHECK(json__i64(json__index(v, 5), &i) == -1);
	CHECK(json__i64(json__index(v, 6), &i) == 0 && i == INT64_MAX);
	CHECK(json__i64(json__index(v, 2), &i) == -1);
	CHECK(json__u64(json__index(v, 7), &u) == -1); /* not an integer */
	CHECK(json__double(json__index(v, 7), &d) == 0 && d == 1500);
	CHECK(json__double(json__index(v, 8), &d) == 0 && d == 0.02);
	CHECK(json__double(json__index(v, 9), &d) == 0 && d == -0.5);
	CHECK_STR(json__index(v, 7)->num.text, "1.5e3");
	CHECK(json__index(v, 10) == NULL);
	CHECK(json__u64(NULL, &u) == -1);
	json__free(doc);
}

static void test_strings(void)
{
	const struct json_value *v;
	struct json *doc;

	doc = parse("[\"\\u00e9\\u20AC\\ud83d\\ude00\", \"a\\u0000b\", "
		    "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\xe2\x82\xac\", \"\"]");
	CHECK(doc != NULL);
	if (!doc) {
		fprintf(stderr, "  %s\n", err);
		return;
	}
	v = json__root(doc);
	CHECK_STR(json__index(v, 0)->str.ptr,
		  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	CHECK(json__index(v, 1)->str.len == 3);
	CHECK(memcmp(json__index(v, 1)->str.ptr, "a\0b", 4) == 0);
	CHECK_STR(json__index(v, 2)->str.ptr, "\"\\/\b\f\n\r\t");
	CHECK_STR(json__index(v, 3)->str.ptr, "\xe2\x82\xac");
	CHECK_STR(json__index(v, 4)->str.ptr, "");
	json__free(doc);
}

/* Each violation is refused, at the right column. */
static void test_strict(void)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "", "col 1: expected a value, got end of input" },
		{ "  ", "col 3: expected a value, got end of input" },
		{ "[1,]", "col 4: expected a value, got ']'" },
		{ "{\"a\":1,}", "col 8: expected a member name, got '}'" },
		{ "{\"a\" 1}", "col 6: expected ':', got '1'" },
		{ "{a:1}", "col 2: expected a member name, got 'a'" },
		{ "[1 2]", "col 4: expected ',' or ']', got '2'" },
		{ "{\"a\":1", "col 7: expected ',' or '}', got end of input" },
		{ "1 2", "col 3: expected the end after the value, got '2'" },
		{ "01", "col 2: leading zero in a number" },
		{ "-01", "col 3: leading zero in a number" },
		{ "+1", "col 1: expected a value, got '+'" },
		{ ".5", "col 1: expected a value, got '.'" },
		{ "1.", "col 3: expected a digit, got end of input" },
		{ "1e", "col 3: expected a digit, got end of input" },
		{ "-", "col 2: expected a digit, got end of input" },
		{ "NaN", "col 1: expected a value, got 'N'" },
		{ "tru", "col 1: expected a value, got 't'" },
		{ "nulls", "col 5: expected the end after the value, got 's'" },
		{ "'a'", "col 1: expected a value, got '''" },
		{ "[1] // c", "col 5: expected the end after the value, got '/'" },
		{ "\"abc", "col 5: unterminated string" },
		{ "\"a\tb\"", "col 3: control character 0x09 in a string "
			      "(must be escaped)" },
		{ "\"\\x\"", "col 3: expected an escape (\\\" \\\\ \\/ \\b \\f "
			     "\\n \\r \\t \\u), got 'x'" },
		{ "\"\\u12G4\"", "col 4: \\u needs 4 hex digits" },
		{ "\"\\udc00\"", "col 8: lone low surrogate \\udc00" },
		{ "\"\\ud800x\"", "col 8: high surrogate \\ud800 without its "
				  "low half" },
		{ "\"\\ud800\\u0041\"", "col 8: high surrogate \\ud800 without "
					"its low half" },
		{ "\"a\xff\"", "col 3: invalid UTF-8 byte 0xff" },
		{ "\"\xc0\x80\"", "col 2: invalid UTF-8 byte 0xc0" },
		{ "\"\xed\xa0\x80\"", "col 2: invalid UTF-8 byte 0xed" },
		{ "\"\xf4\x90\x80\x80\"", "col 2: invalid UTF-8 byte 0xf4" },
		{ "\"\xe2\x82\"", "col 2: invalid UTF-8 byte 0xe2" },
		{ "[1]\x01", "col 4: expected the end after the value, got "
			     "byte 0x01" },
		{ " {\"a\" : [ 1 , {} , [ ] ] } \r\n", "ok" },
		{ "{\"a\":1,\"a\":2}", "ok" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = error_of(cases[i].text);

		CHECK_STR(got, cases[i].err);
	}
}

static void test_depth(void)
{
	char deep[2 * JSON_MAX_DEPTH + 3];
	int n;

	for (n = JSON_MAX_DEPTH; n <= JSON_MAX_DEPTH + 1; n++) {
		memset(deep, '[', n);
		memset(deep + n, ']', n);
		deep[2 * n] = '\0';
		if (n == JSON_MAX_DEPTH)
			CHECK_STR(error_of(deep), "ok");
		else
			CHECK_STR(error_of(deep), "col 65: nested deeper than 64");
	}
}

static void test_objects(void)
{
	const struct json_value *root, *v;
	struct json *doc;
	int i = 0;
	uint64_t u;

	doc = parse("{\"b\":1,\"a\":{\"x.y\":2},\"b\":3,\"e\":{},\"l\":[]}");
	CHECK(doc != NULL);
	if (!doc)
		return;
	root = json__root(doc);
	CHECK(root->list.count == 5);
	/* Duplicates are kept in order; a lookup finds the first. */
	CHECK(json__get_u64(root, "b", &u) == 0 && u == 1);
	/* A name with a dot: reachable by member, not by path. */
	CHECK(json__get_u64(json__member(root, "a"), "x.y", &u) == -1);
	CHECK(json__u64(json__member(json__member(root, "a"), "x.y"), &u) ==
	      0 && u == 2);
	CHECK(json__member(root, "e")->type == JSON_OBJECT);
	CHECK(json__member(root, "e")->list.first == NULL);
	CHECK(json__member(root, "l")->list.count == 0);
	CHECK(json__member(json__member(root, "l"), "x") == NULL);
	CHECK(json__index(root, 0) == NULL); /* not an array */
	for (v = root->list.first; v; v = v->next)
		i++;
	CHECK(i == 5);
	CHECK_STR(json__type_name(json__member(root, "l")->type), "array");
	json__free(doc);
	json__free(NULL);
	CHECK(json__root(NULL) == NULL);
}

/* A big document crosses arena blocks; strings longer than a block. */
static void test_large(void)
{
	struct strbuf sb = { 0 };
	struct json *doc;
	char *big = malloc(10001);
	uint64_t u;
	int i;

	memset(big, 'x', 10000);
	big[10000] = '\0';
	strbuf__addc(&sb, '[');
	for (i = 0; i < 5000; i++)
		strbuf__addf(&sb, "%s{\"i\":%d}", i ? "," : "", i);
	strbuf__addf(&sb, ",\"%s\"]", big);
	doc = parse(sb.buf);
	CHECK(doc != NULL);
	if (doc) {
		CHECK(json__root(doc)->list.count == 5001);
		CHECK(json__get_u64(json__root(doc), "4999.i", &u) == 0 &&
		      u == 4999);
		CHECK(strlen(json__index(json__root(doc), 5000)->str.ptr) ==
		      10000);
		json__free(doc);
	}
	strbuf__free(&sb);
	free(big);
}

int main(void)
{
	test_record_roundtrip();
	test_numbers();
	test_strings();
	test_strict();
	test_depth();
	test_objects();
	test_large();
	return unit_done("json_parse");
}
