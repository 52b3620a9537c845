/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which offsets of each partition the deltas merged so far cover
 * (kmon-topo --fleet, fleet.h): a delta covering offsets another one
 * covered too holds records read twice, counted rather than hidden.
 * Deltas may arrive in any order; each partition keeps its covered
 * offsets as disjoint ranges, one while ownership hands over cleanly. */
#ifndef KMON_TOPO_COVERAGE_H
#define KMON_TOPO_COVERAGE_H

#include <stdint.h>

struct topo_coverage;

struct topo_coverage *coverage__new(void);
void coverage__free(struct topo_coverage *c); /* NULL-safe */
/* Adds offsets start .. next-1 of partition. Returns how many of them
 * were covered already. */
uint64_t coverage__add(struct topo_coverage *c, int32_t partition,
		       int64_t start, int64_t next);
/* Where the covered offsets of partition end (the last next), -1 when
 * none is covered. */
int64_t coverage__end(const struct topo_coverage *c, int32_t partition);

#endif
