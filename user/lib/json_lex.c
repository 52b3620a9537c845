// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_lex.h"
#include "lib/xalloc.h"

static bool is_digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

static const unsigned char *refuse(struct json_lex_error *err,
				   const unsigned char *at,
				   const char *expected, const char *msg)
{
	err->at = at;
	err->expected = expected;
	err->msg = msg;
	return NULL;
}

/* The digits at p, at least one; NULL when there is none. */
static const unsigned char *digits(const unsigned char *p,
				   const unsigned char *end)
{
	if (!is_digit(p, end))
		return NULL;
	while (is_digit(p, end))
		p++;
	return p;
}

/* [s, end) as a double; false when it is beyond a double's range. */
static bool to_double(const unsigned char *s, const unsigned char *end,
		      double *d)
{
	size_t len = (size_t)(end - s);
	char small[64], *buf;

	/* strtod wants a NUL-terminated copy; the text may not have one */
	buf = len < sizeof(small) ? small : xrealloc(NULL, len + 1);
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*d = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	return !(errno == ERANGE && isinf(*d));
}

const unsigned char *json_lex__number(const unsigned char *p,
				      const unsigned char *end,
				      struct json_lex_number *n,
				      struct json_lex_error *err)
{
	const unsigned char *start = p, *q;
	unsigned d;

	n->negative = p < end && *p == '-';
	if (n->negative)
		p++;
	if (!is_digit(p, end))
		return refuse(err, p, "a digit", NULL);
	if (*p == '0' && is_digit(p + 1, end))
		return refuse(err, p, NULL, "leading zero in a number");
	n->fits = true;
	n->magnitude = 0;
	for (; is_digit(p, end); p++) {
		d = (unsigned)(*p - '0');
		if (n->magnitude > (UINT64_MAX - d) / 10)
			n->fits = false;
		else
			n->magnitude = n->magnitude * 10 + d;
	}
	n->integral = true;
	if (p < end && *p == '.') {
		n->integral = false;
		q = digits(p + 1, end);
		if (!q)
			return refuse(err, p + 1, "a digit after '.'", NULL);
		p = q;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		n->integral = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		q = digits(p, end);
		if (!q)
			return refuse(err, p, "a digit in the exponent", NULL);
		p = q;
	}
	if ((!n->integral || !n->fits) && !to_double(start, p, &n->d))
		return refuse(err, start, NULL, "number out of range");
	return p;
}

const char *json_lex__describe(const unsigned char *p, const unsigned char *end,
			       char *buf, size_t len)
{
	if (p >= end)
		return "end of input";
	if (*p >= 0x20 && *p < 0x7f)
		snprintf(buf, len, "'%c'", *p);
	else
		snprintf(buf, len, "byte 0x%02x", *p);
	return buf;
}
