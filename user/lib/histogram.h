/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Log-linear histograms in user space, on the bucket layout BPF programs
 * count into (bpf/histogram.h). */
#ifndef KMON_HISTOGRAM_H
#define KMON_HISTOGRAM_H

#include <stdint.h>

#include "bpf/histogram.h"

/* A value type, not opaque: collectors embed one per series (topology
 * edge, disk) and copy it around, and BPF maps share its bucket layout. */
struct hist {
	uint64_t buckets[HIST_BUCKETS];
	uint64_t count;
	uint64_t sum; /* saturates at UINT64_MAX rather than wrapping */
	uint64_t min; /* exact; valid only when count > 0 */
	uint64_t max;
};

void hist__reset(struct hist *h);
/* Records count samples of value v; count 0 is a no-op. */
void hist__add(struct hist *h, uint64_t v, uint64_t count);
void hist__merge(struct hist *dst, const struct hist *src);

uint64_t hist__count(const struct hist *h);
uint64_t hist__sum(const struct hist *h);
uint64_t hist__min(const struct hist *h); /* 0 when empty */
uint64_t hist__max(const struct hist *h); /* 0 when empty */

/* p is a percentage, 0..100 (hist__percentile(h, 99) is p99); out of range
 * is clamped. Uses the nearest-rank definition, and returns the MIDPOINT of
 * the bucket holding that rank (error <= ~3.2% instead of <= 6.25% for an
 * upper bound); the bucket is first narrowed to the exact min/max seen, and
 * the first and last ranks (p0, p100) return min and max exactly. Returns
 * 0 for an empty histogram. */
uint64_t hist__percentile(const struct hist *h, double p);

/* Inclusive bounds of bucket b, for heatmaps; b >= HIST_BUCKETS gives
 * UINT64_MAX for both. */
uint64_t hist__bucket_low(uint32_t b);
uint64_t hist__bucket_high(uint32_t b);

#endif
