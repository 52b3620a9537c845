/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The tokens both JSON readers share: json_parse.c builds a tree,
 * json_scan.c reads named members in place. One grammar of whitespace
 * and numbers and one way of naming what stands at a position, so that
 * both refuse the same texts with the same words. */
#ifndef KMON_JSON_LEX_H
#define KMON_JSON_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first byte at or after p that is not JSON whitespace. Inline:
 * the readers call it between every two tokens. */
static inline const unsigned char *json_lex__skip_ws(const unsigned char *p,
						     const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

struct json_lex_number {
	bool negative;
	bool integral; /* written without fraction or exponent */
	bool fits; /* the integer part's magnitude fits 64 bits */
	uint64_t magnitude; /* that magnitude, when it fits */
	double d; /* the value, when not integral or not fitting */
};

/* Why a number was refused: at the byte, either what was expected there
 * ("a digit", for "expected a digit, got ...") or a whole message. */
struct json_lex_error {
	const unsigned char *at;
	const char *expected;
	const char *msg;
};

/* RFC 8259's number at p. Integers are read exactly; only fractions,
 * exponents and integers beyond 64 bits go through strtod, and one
 * beyond a double's range is refused. Returns the byte after it, or NULL
 * with *err filled in. */
const unsigned char *json_lex__number(const unsigned char *p,
				      const unsigned char *end,
				      struct json_lex_number *n,
				      struct json_lex_error *err);

/* What stands at p, for messages: "end of input", "'x'" or "byte 0x01";
 * buf holds at least 16 bytes. */
const char *json_lex__describe(const unsigned char *p, const unsigned char *end,
			       char *buf, size_t len);

#endif
