/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A growable byte buffer. Allocation failure aborts: kmond cannot do
 * anything useful without memory, and every caller checking would hide the
 * real logic. */
#ifndef KMON_STRBUF_H
#define KMON_STRBUF_H

#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>

struct strbuf {
	char *buf; /* always NUL-terminated once anything was added */
	size_t len;
	size_t cap;
};

void strbuf__reset(struct strbuf *sb);
void strbuf__free(struct strbuf *sb);
void strbuf__add(struct strbuf *sb, const void *data, size_t len);
void strbuf__addc(struct strbuf *sb, char c);
void strbuf__adds(struct strbuf *sb, const char *s);
void strbuf__addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends v in decimal (without printf: records are mostly numbers). */
void strbuf__add_u64(struct strbuf *sb, uint64_t v);
/* Appends s as a JSON string literal, quotes included. Control bytes and
 * bytes that are not valid UTF-8 are escaped as \u00XX, so any byte string
 * (a comm, a path) yields valid JSON. */
void strbuf__add_json_str(struct strbuf *sb, const char *s, size_t len);

#endif
