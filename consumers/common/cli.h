/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the consumers' command lines share, so the same option reads the
 * same in each: one rule for a duration's value, and one warning for a
 * spelling kept one more release. */
#ifndef KMON_CLI_H
#define KMON_CLI_H

#include <stdint.h>

/* The longest duration an option takes: 10^7 s, about 115 days. */
#define CLI_MAX_DURATION_NS (10000000ULL * 1000000000ULL)

/* A duration option's value, in lib/duration.h's command-line form
 * (250ms, 5s, 1m, a bare number of seconds): more than 0 and at most
 * CLI_MAX_DURATION_NS. Returns 0 or -EINVAL. */
int cli__duration(const char *s, uint64_t *ns);

/* Tells, on stderr, that prog's option `old` is now spelled `now`: the
 * old one still works, for one release. */
void cli__deprecated(const char *prog, const char *old, const char *now);

#endif
