/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which offsets of each partition the deltas merged so far cover
 * (kmon-topo --fleet, fleet.h): a delta covering offsets another one
 * covered too holds records read twice, counted rather than hidden.
 * Deltas may arrive in any order; each partition keeps its covered
 * offsets as disjoint ranges, one while ownership hands over cleanly. */
#ifndef KMON_TOPO_COVERAGE_H
#define KMON_TOPO_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_value;
struct topo_coverage;

struct topo_coverage *coverage__new(void);
void coverage__free(struct topo_coverage *c); /* NULL-safe */
/* Adds offsets start .. next-1 of partition. Returns how many of them
 * were covered already. */
uint64_t coverage__add(struct topo_coverage *c, int32_t partition,
		       int64_t start, int64_t next);
/* Adds the ranges of a JSON array [{"partition","start","next"},..]
 * (a delta's "ranges", a checkpoint's "covered"); *offsets and *twice
 * grow by the offsets they hold and those covered already. Returns 0,
 * or -1 for a malformed array (the ranges before the fault added). */
int coverage__add_json(struct topo_coverage *c, const struct json_value *a,
		       uint64_t *offsets, uint64_t *twice);
/* Where the covered offsets of partition end (the last next), -1 when
 * none is covered. */
int64_t coverage__end(const struct topo_coverage *c, int32_t partition);
/* The k-th covered span, counting over every partition (a checkpoint
 * writes them all): false past the last. */
bool coverage__span(const struct topo_coverage *c, size_t k, int32_t *partition,
		    int64_t *start, int64_t *next);

#endif
