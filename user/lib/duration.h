/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmond's one way to write a duration, in its config and on every
 * program's command line: a number and a unit, 250us, 10ms, 5s, 1m, 1h
 * (and ns). No sign, no spaces, no exponent. */
#ifndef KMON_DURATION_H
#define KMON_DURATION_H

#include <stdint.h>

enum duration_form {
	/* The config: a whole number and a unit, always; a bare "5" in
	 * YAML reads like a count and is refused. */
	DURATION_UNIT,
	/* A command line: also a fraction (1.5s, 0.25ms), and a bare
	 * number is seconds (5, 0.5), as the programs took before units. */
	DURATION_ARG,
};

/* s -> nanoseconds in *ns (0 is a duration: callers check their range).
 * Returns 0, or -EINVAL for anything else, overflow included. */
int duration__parse(const char *s, enum duration_form form, uint64_t *ns);

#endif
