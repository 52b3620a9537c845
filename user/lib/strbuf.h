/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A growable byte buffer. Allocation failure aborts: kmond cannot do
 * anything useful without memory, and every caller checking would hide the
 * real logic. The appends a record is made of are inline (a record per
 * request: calls cost as much as the bytes). */
#ifndef KMON_STRBUF_H
#define KMON_STRBUF_H

#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *buf; /* always NUL-terminated once anything was added */
	size_t len;
	size_t cap;
};

/* Decimal digits of the longest u64; JSON escapes: 6 bytes per byte at
 * most, and the quotes. */
#define STRBUF_U64_MAX 20
#define STRBUF_JSON_STR_MAX(len) (6 * (len) + 2)

void strbuf__grow_to(struct strbuf *sb, size_t need);

/* Where to write up to extra more bytes (the NUL after them fits too);
 * strbuf__done() then says where the writing ended. */
static inline char *strbuf__room(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need > sb->cap)
		strbuf__grow_to(sb, need);
	return sb->buf + sb->len;
}

static inline void strbuf__done(struct strbuf *sb, char *end)
{
	*end = '\0';
	sb->len = (size_t)(end - sb->buf);
}

static inline void strbuf__add(struct strbuf *sb, const void *data, size_t len)
{
	char *p = strbuf__room(sb, len);

	memcpy(p, data, len);
	strbuf__done(sb, p + len);
}

static inline void strbuf__addc(struct strbuf *sb, char c)
{
	char *p = strbuf__room(sb, 1);

	*p++ = c;
	strbuf__done(sb, p);
}

void strbuf__reset(struct strbuf *sb);
void strbuf__free(struct strbuf *sb);
void strbuf__adds(struct strbuf *sb, const char *s);
void strbuf__addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends v in decimal (without printf: records are mostly numbers). */
void strbuf__add_u64(struct strbuf *sb, uint64_t v);
/* Appends s as a JSON string literal, quotes included. Control bytes and
 * bytes that are not valid UTF-8 are escaped as \u00XX, so any byte string
 * (a comm, a path) yields valid JSON. */
void strbuf__add_json_str(struct strbuf *sb, const char *s, size_t len);

/* The same two into room the caller has (STRBUF_U64_MAX,
 * STRBUF_JSON_STR_MAX(len)); they return the end of what they wrote. */
char *strbuf__put_u64(char *p, uint64_t v);
char *strbuf__put_json_str(char *p, const char *s, size_t len);
/* v as 16 lowercase hex digits (no NUL); returns p + 16. */
char *strbuf__put_hex64(char *p, uint64_t v);

#endif
