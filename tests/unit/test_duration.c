// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Durations: the config's form (a whole number and a unit) and the
 * command lines' (also fractions, and a bare number is seconds), with
 * the consumers' range. */
#include <errno.h>
#include <stdint.h>

#include "consumers/common/cli.h"
#include "lib/array.h"
#include "lib/duration.h"
#include "unit.h"

/* ns, or a value no duration has when s is refused. */
static uint64_t parse(const char *s, enum duration_form form)
{
	uint64_t ns = 12345;

	return duration__parse(s, form, &ns) == 0 ? ns : UINT64_MAX;
}

/* What both forms take, alike. */
static void test_both(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		{ "250us", 250000 },
		{ "10ms", 10000000 },
		{ "5s", 5000000000ULL },
		{ "1m", 60000000000ULL },
		{ "1h", 3600000000000ULL },
		{ "2h", 7200000000000ULL },
		{ "7ns", 7 },
		{ "0s", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		CHECK(parse(ok[i].s, DURATION_UNIT) == ok[i].ns);
		CHECK(parse(ok[i].s, DURATION_ARG) == ok[i].ns);
	}
}

/* The config's: a unit always, a whole number. */
static void test_unit_form(void)
{
	CHECK(parse("5", DURATION_UNIT) == UINT64_MAX);
	CHECK(parse("1.5s", DURATION_UNIT) == UINT64_MAX);
}

/* The command lines': also fractions, and a bare number of seconds. */
static void test_arg_form(void)
{
	const enum duration_form f = DURATION_ARG;

	CHECK(parse("5", f) == 5000000000ULL); /* bare: seconds */
	CHECK(parse("0.5", f) == 500000000ULL);
	CHECK(parse("1.5", f) == 1500000000ULL);
	CHECK(parse("0.000001", f) == 1000);
	CHECK(parse("1.5s", f) == 1500000000ULL);
	CHECK(parse("0.25ms", f) == 250000);
	CHECK(parse("1.5m", f) == 90000000000ULL);
	CHECK(parse("1.5ns", f) == 2); /* rounded */
	CHECK(parse("0", f) == 0);
	CHECK(parse("0.0000000001", f) == 0); /* below a nanosecond */
	CHECK(parse("3600.000000001", f) == 3600000000001ULL);
	CHECK(parse(".5", f) == UINT64_MAX);
	CHECK(parse("5.", f) == UINT64_MAX);
	CHECK(parse("5.s", f) == UINT64_MAX);
	CHECK(parse("1e3", f) == UINT64_MAX); /* no exponent */
	CHECK(parse("1.5e3", f) == UINT64_MAX);
	CHECK(parse("0x10", f) == UINT64_MAX);
	CHECK(parse("inf", f) == UINT64_MAX);
	CHECK(parse("1.2.3", f) == UINT64_MAX);
	CHECK(parse("18446744073.709551615", f) == 18446744073709551615ULL);
	CHECK(parse("18446744073.709551616", f) == UINT64_MAX); /* overflow */
}

/* What neither form takes. */
static void test_refused(void)
{
	static const char *const bad[] = {
		"",
		"s",
		"-5s",
		"+5s",
		" 5s",
		"5 s",
		"5s ",
		"5sec",
		"5S",
		"5ks",
		"99999999999999999999s",
		"18446744073709551615h",
		"18446744073709551616ns",
	};
	uint64_t ns = 7;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(duration__parse(bad[i], DURATION_UNIT, &ns) == -EINVAL);
		CHECK(duration__parse(bad[i], DURATION_ARG, &ns) == -EINVAL);
	}
	CHECK(ns == 7); /* untouched */
}

/* The consumers' options: the command-line form, 0 < ns <= 10^7 s. */
static void test_cli(void)
{
	uint64_t ns = 7;

	CHECK(cli__duration("0.5", &ns) == 0 && ns == 500000000ULL);
	CHECK(cli__duration("250ms", &ns) == 0 && ns == 250000000ULL);
	CHECK(cli__duration("10000000", &ns) == 0 && ns == CLI_MAX_DURATION_NS);
	ns = 7;
	CHECK(cli__duration("0", &ns) == -EINVAL);
	CHECK(cli__duration("0s", &ns) == -EINVAL);
	CHECK(cli__duration("0.0000000001", &ns) == -EINVAL);
	CHECK(cli__duration("10000000.000000001", &ns) == -EINVAL);
	CHECK(cli__duration("fast", &ns) == -EINVAL);
	CHECK(ns == 7);
}

int main(void)
{
	test_both();
	test_unit_form();
	test_arg_form();
	test_refused();
	test_cli();
	return unit_done("duration");
}
