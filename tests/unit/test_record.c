// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* JSON encoding: escaping of any byte string, integers kept integers. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/record.h"
#include "lib/utf8.h"
#include "unit.h"

static const char *json_of(struct strbuf *sb, const char *s, size_t len)
{
	strbuf__reset(sb);
	strbuf__add_json_str(sb, s, len);
	return sb->buf;
}

static void test_escaping(void)
{
	struct strbuf sb = { 0 };

	CHECK_STR(json_of(&sb, "nginx", 5), "\"nginx\"");
	CHECK_STR(json_of(&sb, "a\"b\\c", 5), "\"a\\\"b\\\\c\"");
	CHECK_STR(json_of(&sb, "l1\nl2\tx\r", 8), "\"l1\\nl2\\tx\\r\"");
	CHECK_STR(json_of(&sb, "\x01\x1f\x7f", 3), "\"\\u0001\\u001f\\u007f\"");
	/* Embedded NUL: the length, not strlen, decides. */
	CHECK_STR(json_of(&sb, "a\0b", 3), "\"a\\u0000b\"");
	/* Valid UTF-8 passes through: é, €, 😀. */
	CHECK_STR(json_of(&sb, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9),
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* Invalid UTF-8: lone continuation, truncated sequence, overlong
	 * '/', a surrogate, past U+10FFFF, 0xff. */
	CHECK_STR(json_of(&sb, "\x80", 1), "\"\\u0080\"");
	CHECK_STR(json_of(&sb, "\xe2\x82", 2), "\"\\u00e2\\u0082\"");
	CHECK_STR(json_of(&sb, "\xc0\xaf", 2), "\"\\u00c0\\u00af\"");
	CHECK_STR(json_of(&sb, "\xed\xa0\x80", 3), "\"\\u00ed\\u00a0\\u0080\"");
	CHECK_STR(json_of(&sb, "\xf4\x90\x80\x80", 4),
		  "\"\\u00f4\\u0090\\u0080\\u0080\"");
	CHECK_STR(json_of(&sb, "x\xffy", 3), "\"x\\u00ffy\"");
	CHECK_STR(json_of(&sb, "", 0), "\"\"");
	strbuf__free(&sb);
}

/* The escaping byte by byte, as the JSON spec and RFC 3629 say, to check
 * the 8-bytes-at-a-time path against. */
static void reference_json(char *out, const unsigned char *s, size_t len)
{
	*out++ = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = 0;
		uint32_t cp;

		if (c == '"' || c == '\\') {
			*out++ = '\\';
			*out++ = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			*out++ = '\\';
			*out++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c >= 0x20 && c < 0x7f) {
			*out++ = (char)c;
		} else if (c >= 0x80 &&
			   (n = utf8__seq_len(s + i, len - i, &cp))) {
			memcpy(out, s + i, n);
			out += n;
			i += n;
			continue;
		} else {
			out += sprintf(out, "\\u%04x", c);
		}
		i++;
	}
	*out++ = '"';
	*out = '\0';
}

/* Every byte that needs care, alone or as a sequence, at every offset of
 * strings long enough to take the 8-byte path (a sequence across two
 * words too), among plain bytes. */
static void test_escaping_words(void)
{
	static const char *const specials[] = {
		"\"",
		"\\",
		"\n",
		"\x01",
		"\x1f",
		"\x7f",
		"\x80",
		"\xff",
		"\xc3\xa9",
		"\xe2\x82\xac",
		"\xf0\x9f\x98\x80",
		"\xe2\x82",
		"\xc0\xaf",
		" ",
		"~",
	};
	struct strbuf sb = { 0 };
	unsigned char s[64];
	char want[6 * 64 + 3];
	int bad = 0;

	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		size_t n = strlen(specials[k]);

		for (size_t len = n; len <= 40; len++) {
			for (size_t at = 0; at + n <= len; at++) {
				memset(s, 'a' + (int)(len % 26), len);
				memcpy(s + at, specials[k], n);
				reference_json(want, s, len);
				json_of(&sb, (const char *)s, len);
				bad += strcmp(sb.buf, want) != 0;
			}
		}
	}
	CHECK(bad == 0);
	strbuf__free(&sb);
}

static const char *decimal_of(struct strbuf *sb, uint64_t v)
{
	strbuf__reset(sb);
	strbuf__add_u64(sb, v);
	return sb->buf;
}

/* Each digit count, odd and even, and where pairs of digits carry. */
static void test_decimal(void)
{
	struct strbuf sb = { 0 };
	char want[32];
	uint64_t v = 0;

	CHECK_STR(decimal_of(&sb, 0), "0");
	CHECK_STR(decimal_of(&sb, 9), "9");
	CHECK_STR(decimal_of(&sb, 10), "10");
	CHECK_STR(decimal_of(&sb, 99), "99");
	CHECK_STR(decimal_of(&sb, 100), "100");
	CHECK_STR(decimal_of(&sb, 1009), "1009");
	CHECK_STR(decimal_of(&sb, UINT64_MAX), "18446744073709551615");
	for (int digits = 1; digits <= 19; digits++) {
		v = v * 10 + (uint64_t)(digits % 10);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
		CHECK_STR(decimal_of(&sb, v), want);
	}
	strbuf__free(&sb);
}

/* Every nibble value in every place, against printf. */
static void test_hex(void)
{
	char got[17], want[17];
	int bad = 0;

	for (int place = 0; place < 16; place++) {
		for (uint64_t n = 0; n < 16; n++) {
			uint64_t v = n << (4 * place) |
				     0x0123456789abcdefULL >>
					     (4 * (15 - place)) >> 4;

			*strbuf__put_hex64(got, v) = '\0';
			snprintf(want, sizeof(want), "%016llx",
				 (unsigned long long)v);
			bad += strcmp(got, want) != 0;
		}
	}
	*strbuf__put_hex64(got, UINT64_MAX) = '\0';
	CHECK_STR(got, "ffffffffffffffff");
	*strbuf__put_hex64(got, 0x00000000deadbeefULL) = '\0';
	CHECK_STR(got, "00000000deadbeef");
	CHECK(bad == 0);
}

static void test_record(void)
{
	struct record r;

	record__init(&r);
	record__begin(&r, "syscall", 1700000000123456789ULL, "node-1");
	record__process(&r, 42, "a\"b", "web");
	record__str(&r, "syscall", "getppid");
	record__u64(&r, "count", UINT64_MAX);
	record__i64(&r, "delta", -5);
	record__end(&r);
	CHECK_STR(r.json.buf,
		  "{\"kind\":\"syscall\",\"ts\":1700000000123456789,"
		  "\"node\":\"node-1\",\"pid\":42,\"comm\":\"a\\\"b\","
		  "\"service\":\"web\",\"syscall\":\"getppid\","
		  "\"count\":18446744073709551615,\"delta\":-5}");
	CHECK_STR(r.kind, "syscall");
	CHECK_STR(r.key, "web");
	CHECK_STR(r.node, "node-1");

	/* No service: null in JSON, the pid as the Kafka key. */
	record__begin(&r, "offcpu", 1, "n");
	record__process(&r, 7, "sleep", NULL);
	record__array_begin(&r, "stack");
	record__array_str(&r, "schedule+0x1");
	record__array_str(&r, "do_nanosleep+0x2");
	record__array_end(&r);
	record__object_begin(&r, "lost");
	record__u64(&r, "kernel", 0);
	record__object_end(&r);
	record__double(&r, "cpu", 0.5);
	record__double(&r, "nan", 0.0 / 0.0);
	record__bool(&r, "ok", true);
	record__end(&r);
	CHECK_STR(
		r.json.buf,
		"{\"kind\":\"offcpu\",\"ts\":1,\"node\":\"n\",\"pid\":7,"
		"\"comm\":\"sleep\",\"service\":null,"
		"\"stack\":[\"schedule+0x1\",\"do_nanosleep+0x2\"],"
		"\"lost\":{\"kernel\":0},\"cpu\":0.5,\"nan\":null,\"ok\":true}");
	CHECK_STR(r.key, "7");

	/* A record is reusable: begin starts afresh. */
	record__begin(&r, "stats", 2, "n");
	record__end(&r);
	CHECK_STR(r.json.buf, "{\"kind\":\"stats\",\"ts\":2,\"node\":\"n\"}");

	/* Integer edges (encoded without printf). */
	record__begin(&r, "stats", 0, "n");
	record__i64(&r, "min", INT64_MIN);
	record__i64(&r, "max", INT64_MAX);
	record__i64(&r, "zero", 0);
	record__u64(&r, "ten", 10);
	record__end(&r);
	CHECK_STR(r.json.buf, "{\"kind\":\"stats\",\"ts\":0,\"node\":\"n\","
			      "\"min\":-9223372036854775808,"
			      "\"max\":9223372036854775807,\"zero\":0,"
			      "\"ten\":10}");
	record__free(&r);
}

int main(void)
{
	test_escaping();
	test_escaping_words();
	test_decimal();
	test_hex();
	test_record();
	return unit_done("record");
}
