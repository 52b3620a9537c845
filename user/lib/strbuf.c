// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

static void strbuf__grow_to(struct strbuf *sb, size_t need)
{
	size_t cap = sb->cap ? sb->cap : 256;

	while (cap < need)
		cap *= 2;
	sb->buf = xrealloc(sb->buf, cap);
	sb->cap = cap;
}

/* Room for extra more bytes and the NUL; inline, as every append starts
 * with it and it almost never has to grow. */
static inline void strbuf__grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need > sb->cap)
		strbuf__grow_to(sb, need);
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
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	char digits[20];
	size_t n = sizeof(digits);

	/* Records are mostly numbers (a timestamp is 19 digits): printf's
	 * machinery costs more than the rest of the encoding, and two
	 * digits per division halve the divisions. */
	while (v >= 100) {
		unsigned int two = (unsigned int)(v % 100) * 2;

		v /= 100;
		digits[--n] = pairs[two + 1];
		digits[--n] = pairs[two];
	}
	if (v >= 10) {
		digits[--n] = pairs[v * 2 + 1];
		digits[--n] = pairs[v * 2];
	} else {
		digits[--n] = (char)('0' + v);
	}
	strbuf__add(sb, digits + n, sizeof(digits) - n);
}

static inline int json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
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

void strbuf__add_json_str(struct strbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *out;

	/* Room for the worst case (every byte as \u00XX) up front: the
	 * loop then writes straight into the buffer. */
	strbuf__grow(sb, 6 * len + 2);
	out = sb->buf + sb->len;
	*out++ = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		const char *esc;
		size_t n;
		uint32_t cp;

		if (json_plain(c)) {
			*out++ = (char)c;
			i++;
			continue;
		}
		esc = json_short_escape(c);
		if (esc) {
			memcpy(out, esc, 2);
			out += 2;
			i++;
			continue;
		}
		n = (c < 0x20 || c == 0x7f) ? 0 : utf8__seq_len(p + i, len - i, &cp);
		if (n == 0) {
			/* Not representable as is: keep the byte's value. */
			memcpy(out, "\\u00", 4);
			out[4] = hex[c >> 4];
			out[5] = hex[c & 0xf];
			out += 6;
			i++;
		} else {
			memcpy(out, p + i, n);
			out += n;
			i += n;
		}
	}
	*out++ = '"';
	*out = '\0';
	sb->len = (size_t)(out - sb->buf);
}
