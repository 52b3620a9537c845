/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#include <string.h>

#include "lib/histogram.h"

/* Saturating, so a runaway series reports "huge" rather than wrapping to a
 * small, plausible-looking number. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

void hist__reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist__add(struct hist *h, uint64_t v, uint64_t count)
{
	if (!count)
		return;
	if (!h->count || v < h->min)
		h->min = v;
	if (!h->count || v > h->max)
		h->max = v;
	h->buckets[hist_bucket(v)] = sat_add(h->buckets[hist_bucket(v)], count);
	h->count = sat_add(h->count, count);
	h->sum = sat_add(h->sum, sat_mul(v, count));
}

void hist__merge(struct hist *dst, const struct hist *src)
{
	uint32_t b;

	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (!dst->count || src->max > dst->max)
		dst->max = src->max;
	for (b = 0; b < HIST_BUCKETS; b++)
		dst->buckets[b] = sat_add(dst->buckets[b], src->buckets[b]);
	dst->count = sat_add(dst->count, src->count);
	dst->sum = sat_add(dst->sum, src->sum);
}

uint64_t hist__count(const struct hist *h)
{
	return h->count;
}

uint64_t hist__sum(const struct hist *h)
{
	return h->sum;
}

uint64_t hist__min(const struct hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t hist__max(const struct hist *h)
{
	return h->count ? h->max : 0;
}

uint64_t hist__bucket_low(uint32_t b)
{
	uint32_t group = b >> HIST_SUB_BITS;

	if (b >= HIST_BUCKETS)
		return UINT64_MAX;
	if (group == 0)
		return b;
	/* (HIST_SUB + sub) << (msb - HIST_SUB_BITS), msb = group + 3 */
	return (uint64_t)(HIST_SUB + (b & (HIST_SUB - 1))) << (group - 1);
}

uint64_t hist__bucket_high(uint32_t b)
{
	uint32_t group = b >> HIST_SUB_BITS;

	if (b >= HIST_BUCKETS)
		return UINT64_MAX;
	if (group == 0)
		return b;
	return hist__bucket_low(b) + ((1ULL << (group - 1)) - 1);
}

/* Nearest rank: the smallest rank r with r >= p/100 * count, 1-based. */
static uint64_t hist_rank(uint64_t count, double p)
{
	double x;
	uint64_t r;

	if (!(p > 0)) /* also catches NaN */
		return 1;
	if (p >= 100)
		return count;
	x = p / 100 * (double)count;
	if (x >= (double)count)
		return count;
	r = (uint64_t)x;
	if ((double)r < x)
		r++;
	return r ? r : 1;
}

uint64_t hist__percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi;
	uint32_t b;

	if (!h->count)
		return 0;
	rank = hist_rank(h->count, p);
	/* the extremes are known exactly, no need to estimate them */
	if (rank == 1)
		return h->min;
	if (rank >= h->count)
		return h->max;
	for (b = 0; b < HIST_BUCKETS - 1; b++) {
		seen = sat_add(seen, h->buckets[b]);
		if (seen >= rank)
			break;
	}
	/* min and max narrow the first and last buckets */
	lo = hist__bucket_low(b);
	hi = hist__bucket_high(b);
	if (lo < h->min)
		lo = h->min;
	if (hi > h->max)
		hi = h->max;
	if (hi < lo) /* only if buckets and min/max disagree */
		return lo;
	return lo + (hi - lo) / 2;
}
