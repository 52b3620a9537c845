// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one-pass reader of named members: values as written, strings
 * decoded on demand, the other members skipped but checked, and every
 * text json_parse refuses refused too (with the duplicates of the named
 * members), where it says. */
#include "lib/json_parse.h"
#include "lib/json_scan.h"
#include "unit.h"

static const char *const names[] = { "a", "s", "n", "neg", "big",
				     "f", "t", "o", "z" };

enum { A, S, N, NEG, BIG, F, T, O, Z };

static struct json_scan_keys keys;

static bool scan(const char *text, struct json_scan_value *v,
		 struct json_error *err)
{
	return json_scan(text, strlen(text), &keys, v, err);
}

static void test_values(void)
{
	struct json_scan_value v[9];
	struct json_error err;
	char buf[64];
	uint64_t u;
	int64_t i;

	CHECK(scan(" {\"skip\":[1,{\"x\":[true,null]},\"\\u00e9\"],"
		   "\"a\":18446744073709551615,\"s\":\"caf\\u00e9 \\\"x\\\"\","
		   "\"n\":null,\"neg\":-9223372036854775808,"
		   "\"big\":18446744073709551616,\"f\":1.5e3,\"t\":true,"
		   "\"o\":{\"a\":2},\"skip\":1} ",
		   v, &err));
	CHECK(json_scan__u64(&v[A], &u) && u == UINT64_MAX);
	CHECK(!json_scan__i64(&v[A], &i));
	CHECK(v[S].type == JSON_SCAN_STRING && v[S].escaped);
	CHECK(json_scan__string(&v[S], buf) == 9);
	CHECK_STR(buf, "caf\xc3\xa9 \"x\"");
	CHECK(v[N].type == JSON_SCAN_NULL);
	CHECK(json_scan__i64(&v[NEG], &i) && i == INT64_MIN);
	CHECK(!json_scan__u64(&v[NEG], &u));
	CHECK(v[BIG].type == JSON_SCAN_NUMBER && !json_scan__u64(&v[BIG], &u));
	CHECK(v[F].type == JSON_SCAN_NUMBER && !json_scan__u64(&v[F], &u));
	CHECK(v[T].type == JSON_SCAN_BOOL && v[T].b);
	CHECK(v[O].type == JSON_SCAN_NESTED); /* its "a" is not the top one */
	CHECK(v[Z].type == JSON_SCAN_ABSENT);
	CHECK(scan("{\"s\":\"plain\"}", v, &err) && !v[S].escaped &&
	      v[S].len == 5 && memcmp(v[S].s, "plain", 5) == 0);
	CHECK(scan("{}", v, &err) && v[A].type == JSON_SCAN_ABSENT);
}

/* Each refused, at the column json_parse names, or (a duplicate of a
 * named member, a top value that is not an object) on its own terms. */
static void test_refuses(void)
{
	static const char *const bad[] = {
		"",
		"[1]",
		"{\"a\":1,}",
		"{\"a\":01}",
		"{\"a\":1.}",
		"{\"a\":-}",
		"{\"a\":1e}",
		"{\"a\":tru}",
		"{\"a\":\"x\ty\"}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"a\":\"\xc3\"}",
		"{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"open}",
		"{\"o\":{\"x\" 1}}",
		"{\"o\":[1 2]}",
		"{\"a\":1} x",
		"{\"a\":1",
		"{a:1}",
		/* found by fuzz_json_read, each refused before at another
		 * place or not at all */
		"{\"a\":1/5}",
		"{\"a\":a}",
		"{\"a\":\"x\\u\xd0\xd4"
		"e9\"}",
		"{\"a\":\"{x\\{u",
		"{\"a\":5e1111111111111111111111}",
	};
	struct json_scan_value v[9];
	struct json_error err, want;
	char deep[JSON_MAX_DEPTH + 32];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_value *tree =
			json__parse(bad[i], strlen(bad[i]), &want);

		CHECK(!scan(bad[i], v, &err));
		/* where the tree parser says too (it takes "[1]") */
		if (!tree && err.col != want.col)
			fprintf(stderr, "%s: col %zu, json__parse %zu\n",
				bad[i], err.col, want.col);
		CHECK(tree || err.col == want.col);
		/* and in the same words, for an object */
		if (!tree && bad[i][0] == '{' && strcmp(err.msg, want.msg))
			fprintf(stderr, "%s: \"%s\", json__parse \"%s\"\n",
				bad[i], err.msg, want.msg);
		CHECK(tree || bad[i][0] != '{' ||
		      strcmp(err.msg, want.msg) == 0);
		json__free(tree);
	}
	CHECK(!scan("{\"a\":1,\"a\":2}", v, &err));
	CHECK_STR(err.msg, "duplicate key \"a\"");
	CHECK(scan("{\"x\":1,\"x\":2}", v, &err)); /* not named: not kept */
	strcpy(deep, "{\"o\":");
	memset(deep + 5, '[', JSON_MAX_DEPTH + 10);
	deep[5 + JSON_MAX_DEPTH + 10] = '\0';
	CHECK(!scan(deep, v, &err) && strstr(err.msg, "nesting"));
}

/* Each value named as json_parse's tree names it (a consumer's
 * messages say what a member was instead of what it should be). */
static void test_type_names(void)
{
	static const char *const values[] = { "null",  "true", "0",   "7",
					      "-7",    "-0",   "1.5", "1e3",
					      "\"x\"", "[1]",  "{}" };
	struct json_scan_value v[9];
	struct json_error err;
	char text[64];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct json_value *doc;

		snprintf(text, sizeof(text), "{\"a\":%s}", values[i]);
		doc = json__parse(text, strlen(text), &err);
		CHECK(doc && scan(text, v, &err));
		if (doc)
			CHECK_STR(json_scan__type_name(&v[A]),
				  json__type_name(json__get(doc, "a")));
		json__free(doc);
	}
	CHECK(scan("{}", v, &err));
	CHECK_STR(json_scan__type_name(&v[A]), "nothing");
}

int main(void)
{
	json_scan__keys(&keys, names, 9);
	test_values();
	test_refuses();
	test_type_names();
	return unit_done("json_scan");
}
