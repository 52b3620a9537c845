// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

/* Words are put together and stored byte for byte as on x86 and arm64. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "strbuf's word tricks assume a little-endian host");

void strbuf__grow_to(struct strbuf *sb, size_t need)
{
	size_t cap = sb->cap ? sb->cap : 256;

	while (cap < need)
		cap *= 2;
	sb->buf = xrealloc(sb->buf, cap);
	sb->cap = cap;
}

void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void strbuf__adds(struct strbuf *sb, const char *s)
{
	strbuf__add(sb, s, strlen(s));
}

void strbuf__addf(struct strbuf *sb, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	int n;

	/* Most fields are short: format once into a stack buffer. */
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		strbuf__add(sb, small, (size_t)n);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(strbuf__room(sb, (size_t)n), (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

static inline void put_pair(char *p, uint32_t v)
{
	memcpy(p, digit_pairs + 2 * v, 2);
}

/* v's digits, ending at end, two per step in 32-bit arithmetic (a
 * division by 100 is a multiplication there). */
static inline void put_u32_before(char *end, uint32_t v)
{
	while (v >= 100) {
		uint32_t q = v / 100;

		end -= 2;
		put_pair(end, v - q * 100);
		v = q;
	}
	if (v >= 10)
		put_pair(end - 2, v);
	else
		end[-1] = (char)('0' + v);
}

static inline char *put_u32(char *p, uint32_t v)
{
	static const uint32_t pow10[10] = { 1,	       10,	 100,
					    1000,      10000,	 100000,
					    1000000,   10000000, 100000000,
					    1000000000 };
	int t;

	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	/* floor(log10(v)): log2 times 1233/4096, then one comparison */
	t = (32 - __builtin_clz(v)) * 1233 >> 12;
	t -= v < pow10[t];
	put_u32_before(p + t + 1, v);
	return p + t + 1;
}

/* Exactly 8 digits of v < 10^8: four independent pairs. */
static inline char *put_8_digits(char *p, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v - hi * 10000;

	put_pair(p, hi / 100);
	put_pair(p + 2, hi % 100);
	put_pair(p + 4, lo / 100);
	put_pair(p + 6, lo % 100);
	return p + 8;
}

/* Records are mostly numbers (a timestamp is 19 digits): printf's
 * machinery costs more than the rest of the encoding. Below 2^32 in
 * 32-bit steps; above, 8 digits at a time. */
char *strbuf__put_u64(char *p, uint64_t v)
{
	if (v <= UINT32_MAX)
		return put_u32(p, (uint32_t)v);
	if (v < 10000000000000000ULL) {
		p = put_u32(p, (uint32_t)(v / 100000000));
	} else {
		p = put_u32(p, (uint32_t)(v / 10000000000000000ULL));
		p = put_8_digits(p, (uint32_t)(v / 100000000 % 100000000));
	}
	return put_8_digits(p, (uint32_t)(v % 100000000));
}

void strbuf__add_u64(struct strbuf *sb, uint64_t v)
{
	strbuf__done(sb, strbuf__put_u64(strbuf__room(sb, STRBUF_U64_MAX), v));
}

/* 8 lowercase hex digits of x as 8 bytes, the first digit in the lowest
 * byte: each nibble spread to a byte, then '0' + n, or 'a' + n - 10 when
 * n > 9 (n + 6 carries into bit 4 exactly then). */
static inline uint64_t hex8(uint32_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	uint64_t v = x;

	v = (v | v << 16) & 0x0000ffff0000ffffULL;
	v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
	v = __builtin_bswap64(v); /* the most significant nibble first */
	return v + ones * '0' + ((v + ones * 6) >> 4 & ones) * ('a' - '0' - 10);
}

char *strbuf__put_hex64(char *p, uint64_t v)
{
	uint64_t hi = hex8((uint32_t)(v >> 32)), lo = hex8((uint32_t)v);

	memcpy(p, &hi, 8);
	memcpy(p + 8, &lo, 8);
	return p + 16;
}

/* Bytes JSON takes as they are: printable ASCII but '"' and '\\'. */
static const unsigned char json_plain[256] = {
	[0x20 ... 0x21] = 1, /* '"' is 0x22 */
	[0x23 ... 0x5b] = 1, /* '\\' is 0x5c */
	[0x5d ... 0x7e] = 1,
};

/* Non-zero when one of the 8 bytes of w is not plain: a control byte,
 * '"', '\\', or 0x7f and above (per byte, "has a byte less than n" and
 * "has a zero byte" from the bit-twiddling folklore; a byte flagged
 * wrongly after a flagged one does not matter, the 8 bytes then go the
 * slow way). */
static inline uint64_t json_unplain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');

	return (((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) |
		((bslash - ones) & ~bslash) | (w + ones) | w) &
	       high;
}

/* The escape of a byte JSON has a short form for, else NULL. */
static const char *json_short_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\t':
		return "\\t";
	case '\r':
		return "\\r";
	}
	return NULL;
}

/* A byte that is not plain, or the UTF-8 sequence it starts; returns
 * how many bytes of p it took. */
static size_t json_escape_one(char **outp, const unsigned char *p, size_t left)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = p[0];
	const char *esc = json_short_escape(c);
	char *out = *outp;
	uint32_t cp;
	size_t n;

	if (esc) {
		memcpy(out, esc, 2);
		out += 2;
		n = 1;
	} else if (c >= 0x80 && (n = utf8__seq_len(p, left, &cp))) {
		memcpy(out, p, n);
		out += n;
	} else {
		/* Not representable as is: keep the byte's value. */
		memcpy(out, "\\u00", 4);
		out[4] = hex[c >> 4];
		out[5] = hex[c & 0xf];
		out += 6;
		n = 1;
	}
	*outp = out;
	return n;
}

/* From byte i of p on, one by one, and the closing quote (apart, so the
 * word loop needs no registers saved). */
static __attribute__((noinline)) char *
json_str_bytes(char *out, const unsigned char *p, size_t i, size_t len)
{
	while (i < len) {
		if (json_plain[p[i]])
			*out++ = (char)p[i++];
		else
			i += json_escape_one(&out, p + i, len - i);
	}
	*out++ = '"';
	return out;
}

/* The len < 8 bytes at p as one word, the bytes past them plain ('a'):
 * two overlapping loads, no loop. */
static inline uint64_t json_short_word(const unsigned char *p, size_t len)
{
	uint64_t w;

	if (len >= 4) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + len - 4, 4);
		w = lo | (uint64_t)hi << (8 * (len - 4));
	} else {
		w = p[0] | (uint64_t)p[len / 2] << (8 * (len / 2)) |
		    (uint64_t)p[len - 1] << (8 * (len - 1));
	}
	return w | (0x6161616161616161ULL & ~0ULL << (8 * len));
}

/* Word by word while the words are plain, the last word overlapping the
 * one before; from the first word that is not, byte by byte. */
static __attribute__((noinline)) char *
json_str_words(char *out, const unsigned char *p, size_t len)
{
	size_t i;
	uint64_t w;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		if (json_unplain8(w))
			return json_str_bytes(out + i, p, i, len);
		memcpy(out + i, &w, 8);
	}
	memcpy(&w, p + len - 8, 8);
	if (json_unplain8(w))
		return json_str_bytes(out + i, p, i, len);
	memcpy(out + len - 8, &w, 8);
	out[len] = '"';
	return out + len + 1;
}

/* Names, addresses and ids are nearly always plain: a short one is
 * checked and stored as one padded word (the room for escapes covers
 * the padding), a longer one word by word. */
char *strbuf__put_json_str(char *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t w;

	*out++ = '"';
	if (len >= 8)
		return json_str_words(out, p, len);
	if (len == 0)
		return json_str_bytes(out, p, 0, 0);
	w = json_short_word(p, len);
	if (json_unplain8(w))
		return json_str_bytes(out, p, 0, len);
	memcpy(out, &w, 8);
	out[len] = '"';
	return out + len + 1;
}

void strbuf__add_json_str(struct strbuf *sb, const char *s, size_t len)
{
	strbuf__done(sb, strbuf__put_json_str(
				 strbuf__room(sb, STRBUF_JSON_STR_MAX(len)), s,
				 len));
}
