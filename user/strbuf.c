// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static void strbuf__grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap *= 2;
	char *buf = realloc(sb->buf, cap);
	if (!buf) {
		fprintf(stderr, "kmond: out of memory\n");
		abort();
	}
	sb->buf = buf;
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

void strbuf__add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf__grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf__addc(struct strbuf *sb, char c)
{
	strbuf__add(sb, &c, 1);
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
	strbuf__grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void strbuf__add_u64(struct strbuf *sb, uint64_t v)
{
	char digits[20];
	size_t n = sizeof(digits);

	/* Records are mostly numbers: printf's machinery costs more than
	 * the rest of the encoding. */
	do {
		digits[--n] = '0' + v % 10;
		v /= 10;
	} while (v);
	strbuf__add(sb, digits + n, sizeof(digits) - n);
}

/* Length of the valid UTF-8 sequence starting at s (at most len bytes), or
 * 0 when it is not one: overlong forms, surrogates and code points past
 * U+10FFFF are invalid too (RFC 3629). */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static inline int json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void strbuf__add_json_str(struct strbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	strbuf__addc(sb, '"');
	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		/* Fast path: a run of printable ASCII needing no escape is
		 * copied at once (names, services, addresses are all this). */
		for (n = i; n < len && json_plain(p[n]); n++)
			;
		if (n > i) {
			strbuf__add(sb, p + i, n - i);
			i = n;
			continue;
		}
		switch (c) {
		case '"':
			strbuf__adds(sb, "\\\"");
			i++;
			continue;
		case '\\':
			strbuf__adds(sb, "\\\\");
			i++;
			continue;
		case '\n':
			strbuf__adds(sb, "\\n");
			i++;
			continue;
		case '\t':
			strbuf__adds(sb, "\\t");
			i++;
			continue;
		case '\r':
			strbuf__adds(sb, "\\r");
			i++;
			continue;
		}
		n = (c < 0x20 || c == 0x7f) ? 0 : utf8_seq_len(p + i, len - i);
		if (n == 0) {
			/* Not representable as is: keep the byte's value. */
			strbuf__addf(sb, "\\u%04x", c);
			i++;
		} else {
			strbuf__add(sb, p + i, n);
			i += n;
		}
	}
	strbuf__addc(sb, '"');
}
