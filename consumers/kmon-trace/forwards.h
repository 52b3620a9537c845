/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-trace --fleet, stage 2: the traces this member sent on to their
 * caller's trace (fleet.h). A span of such a trace that comes later is
 * sent on after them, for late_ns at most and max of them at most (the
 * oldest go first). */
#ifndef KMON_TRACE_FORWARDS_H
#define KMON_TRACE_FORWARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "span.h"

struct forward {
	struct trace_id from, to;
	int32_t partition; /* of <prefix><group>.span the move came from */
};

#define FORWARDS_HOPS 32

struct forwards;

struct forwards *forwards__new(size_t max, uint64_t late_ns);
void forwards__free(struct forwards *f); /* NULL-safe */
/* Whether from already goes somewhere (a repeated move is ignored). */
bool forwards__add(struct forwards *f, const struct forward *fw,
		   uint64_t now_ns);
/* Where spans of trace id go, NULL when they stay. */
const struct forward *forwards__find(const struct forwards *f,
				     struct trace_id id);
/* Where spans of trace id end up: its forward's target, that target's,
 * and so on (FORWARDS_HOPS at most: records that contradict each other
 * could make a cycle); id when it stays. */
struct trace_id forwards__resolve(const struct forwards *f, struct trace_id id);
void forwards__expire(struct forwards *f, uint64_t now_ns);
/* Every forward of a revoked partition to fn (a const struct forward
 * *), then forgotten here. */
size_t forwards__hand_over(struct forwards *f,
			   bool (*revoked)(int32_t partition, void *ctx),
			   void (*fn)(const void *forward, void *ctx),
			   void *ctx);
size_t forwards__count(const struct forwards *f);

#endif
