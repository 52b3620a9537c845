/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Requests counted by outcome (bpf/tcp/outcome.h), as `topology` and
 * `load` records carry them: those whose outcome kmond read, the failed
 * ones, and HTTP's by status class. */
#ifndef KMON_OUTCOME_COUNTS_H
#define KMON_OUTCOME_COUNTS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/tcp/outcome.h"

struct record;

struct outcome_counts {
	uint64_t outcomes;
	uint64_t errors;
	uint64_t status_class[5]; /* 1xx at 0 */
};

/* One request's outcome, when known. */
void outcome_counts__add(struct outcome_counts *to, const struct outcome *o);
void outcome_counts__sum(struct outcome_counts *to,
			 const struct outcome_counts *from);
/* now - was, into d; was becomes now. */
void outcome_counts__delta(struct outcome_counts *d, struct outcome_counts *was,
			   const struct outcome_counts *now);
/* `outcomes` and `errors`, and the status classes that are not 0. */
void outcome_counts__record(struct record *rec, const struct outcome_counts *c);

#endif
