// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Text helpers shared by the pictures: XML escaping that always yields a
 * well-formed document, human units, and the parsing of times given on
 * the command line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/array.h"
#include "lib/utf8.h"
#include "view.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* Length of the valid UTF-8 sequence at s that XML 1.0 allows, 0 when
 * invalid: XML forbids U+FFFE and U+FFFF even as references. */
static size_t xml_char_len(const unsigned char *s)
{
	uint32_t cp = 0;
	size_t n = utf8__seq_len(s, strnlen((const char *)s, 4), &cp);

	return cp == 0xfffe || cp == 0xffff ? 0 : n;
}

void svg__escape(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		switch (*p) {
		case '&':
			strbuf__adds(sb, "&amp;");
			break;
		case '<':
			strbuf__adds(sb, "&lt;");
			break;
		case '>':
			strbuf__adds(sb, "&gt;");
			break;
		case '"':
			strbuf__adds(sb, "&quot;");
			break;
		case '\'':
			strbuf__adds(sb, "&#39;");
			break;
		default:
			if (*p < 0x20) {
				strbuf__adds(sb, REPLACEMENT);
				break;
			}
			n = xml_char_len(p);
			if (!n) {
				strbuf__adds(sb, REPLACEMENT);
				break;
			}
			strbuf__add(sb, p, n);
			p += n;
			continue;
		}
		p++;
	}
}

void fmt__duration(char *buf, size_t len, double ns)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "\xc2\xb5s" } };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		double v = ns / units[i].div;

		if (v >= 1) {
			snprintf(buf, len, "%.*f %s",
				 v >= 100 ? 0 :
				 v >= 10  ? 1 :
					    2,
				 v, units[i].unit);
			return;
		}
	}
	snprintf(buf, len, "%.0f ns", ns);
}

void fmt__time(char *buf, size_t len, uint64_t ts_ns, bool with_date)
{
	time_t t = (time_t)(ts_ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
}

void fmt__count(char *buf, size_t len, double v)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* Seconds below this are epoch seconds; above, nanoseconds (1e12 s is
 * the year 33658; 1e12 ns is 1970-01-01 00:16:40). */
#define SECONDS_LIMIT 1e12

int parse__time(const char *s, uint64_t *out)
{
	char *end;
	double sec;

	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return -EINVAL;
	if (!strchr(s, '.')) {
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || *end)
			return -EINVAL;
		*out = v >= SECONDS_LIMIT ? v : v * 1000000000ULL;
		return 0;
	}
	errno = 0;
	sec = strtod(s, &end);
	if (errno || *end || sec >= SECONDS_LIMIT)
		return -EINVAL;
	*out = (uint64_t)llround(sec * 1e9);
	return 0;
}
