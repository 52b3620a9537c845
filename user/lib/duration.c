// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/duration.h"

#define NS_PER_SEC 1000000000ULL
/* Fraction digits past this many are below any unit's nanosecond. */
#define MAX_FRACTION_DIGITS 18

static const struct {
	const char *suffix;
	uint64_t ns;
} units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", 1000000 },
	{ "s", NS_PER_SEC },
	{ "m", 60 * NS_PER_SEC },
	{ "h", 3600 * NS_PER_SEC },
};

static int unit_ns(const char *suffix, enum duration_form form, uint64_t *ns)
{
	if (!*suffix && form == DURATION_ARG) {
		*ns = NS_PER_SEC;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(suffix, units[i].suffix) == 0) {
			*ns = units[i].ns;
			return 0;
		}
	}
	return -EINVAL;
}

/* The digits after a '.', as a fraction of one: strtod would also take
 * an exponent, which durations do not have. */
static double fraction(const char *digits, size_t n)
{
	double f = 0, scale = 1;

	for (size_t i = 0; i < n && i < MAX_FRACTION_DIGITS; i++) {
		scale /= 10;
		f += (digits[i] - '0') * scale;
	}
	return f;
}

int duration__parse(const char *s, enum duration_form form, uint64_t *ns)
{
	unsigned long long whole;
	uint64_t unit, part;
	double frac = 0;
	char *end;
	size_t n;

	/* strtoull alone would take spaces, a sign or hex */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	whole = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == '.' && form == DURATION_ARG) {
		n = strspn(end + 1, "0123456789");
		if (!n)
			return -EINVAL;
		frac = fraction(end + 1, n);
		end += 1 + n;
	}
	if (unit_ns(end, form, &unit) || whole > UINT64_MAX / unit)
		return -EINVAL;
	part = (uint64_t)llround(frac * unit);
	if (whole * unit > UINT64_MAX - part)
		return -EINVAL;
	*ns = whole * unit + part;
	return 0;
}
