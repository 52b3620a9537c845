/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "lib/histogram.h"

static int within(uint64_t got, double want, double rel)
{
	double d = (double)got - want;

	if (d < 0)
		d = -d;
	if (d > want * rel) {
		fprintf(stderr, "  got %llu, want %.0f +- %.1f%%\n",
			(unsigned long long)got, want, rel * 100);
		return 0;
	}
	return 1;
}

static void test_bucket_values(void)
{
	uint32_t k;

	CHECK(HIST_BUCKETS == 976);
	CHECK(hist_bucket(0) == 0);
	CHECK(hist_bucket(1) == 1);
	CHECK(hist_bucket(15) == 15);
	CHECK(hist_bucket(16) == 16);
	CHECK(hist_bucket(17) == 17);
	CHECK(hist_bucket(31) == 31);
	CHECK(hist_bucket(32) == 32);
	CHECK(hist_bucket(33) == 32);
	CHECK(hist_bucket(34) == 33);
	CHECK(hist_bucket(63) == 47);
	CHECK(hist_bucket(64) == 48);
	CHECK(hist_bucket(1023) == 111);
	CHECK(hist_bucket(1024) == 112);
	CHECK(hist_bucket(UINT64_MAX) == HIST_BUCKETS - 1);
	CHECK(hist__bucket_low(HIST_BUCKETS - 1) == 31ULL << 59);
	CHECK(hist__bucket_high(HIST_BUCKETS - 1) == UINT64_MAX);
	CHECK(hist__bucket_low(HIST_BUCKETS) == UINT64_MAX);

	for (k = 0; k < 4; k++)
		CHECK(hist_bucket(1ULL << k) == (1U << k));
	/* every power of two from 16 up starts a group */
	for (k = 4; k < 64; k++) {
		uint64_t v = 1ULL << k;

		CHECK(hist_bucket(v) == (k - 3) * HIST_SUB);
		CHECK(hist_bucket(v - 1) == (k - 3) * HIST_SUB - 1);
		CHECK(hist__bucket_low((k - 3) * HIST_SUB) == v);
		CHECK(hist__bucket_high((k - 3) * HIST_SUB - 1) == v - 1);
	}
}

/* The buckets tile 0..UINT64_MAX with no gap or overlap, each maps back to
 * itself, and none is wider than 1/16 of its lower bound. */
static void test_bucket_tiling(void)
{
	uint32_t b, bad = 0;

	CHECK(hist__bucket_low(0) == 0);
	for (b = 0; b < HIST_BUCKETS; b++) {
		uint64_t lo = hist__bucket_low(b), hi = hist__bucket_high(b);

		if (hi < lo || hist_bucket(lo) != b || hist_bucket(hi) != b)
			bad++;
		if (b + 1 < HIST_BUCKETS && hi + 1 != hist__bucket_low(b + 1))
			bad++;
		if (b >= 32 && (hi - lo + 1) > lo / 16)
			bad++;
		if (b < 32 && hi != lo)
			bad++;
	}
	CHECK(bad == 0);
}

static void test_log2(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint32_t i, bad = 0;

	for (i = 0; i < 100000; i++) {
		uint64_t v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (i % 64);
		if (!v)
			continue;
		if (hist_log2(v) != 63U - (uint32_t)__builtin_clzll(v))
			bad++;
	}
	CHECK(bad == 0);
	CHECK(hist_log2(1) == 0 && hist_log2(UINT64_MAX) == 63);
}

static void test_empty(void)
{
	struct hist h, e;

	hist__reset(&h);
	hist__reset(&e);
	CHECK(hist__count(&h) == 0);
	CHECK(hist__sum(&h) == 0);
	CHECK(hist__min(&h) == 0 && hist__max(&h) == 0);
	CHECK(hist__percentile(&h, 50) == 0);
	CHECK(hist__percentile(&h, 99) == 0);
	hist__add(&h, 1000, 0); /* count 0 records nothing */
	CHECK(hist__count(&h) == 0 && hist__percentile(&h, 50) == 0);
	hist__merge(&h, &e);
	CHECK(memcmp(&h, &e, sizeof(h)) == 0);
}

static void test_uniform(void)
{
	struct hist h;
	uint64_t v;

	hist__reset(&h);
	for (v = 1; v <= 10000; v++)
		hist__add(&h, v, 1);
	CHECK(hist__count(&h) == 10000);
	CHECK(hist__sum(&h) == 50005000);
	CHECK(within(hist__percentile(&h, 50), 5000, 0.07));
	CHECK(within(hist__percentile(&h, 99), 9900, 0.07));
	/* the midpoint promise is tighter than the spec's 7% */
	CHECK(within(hist__percentile(&h, 50), 5000, 0.035));
	CHECK(within(hist__percentile(&h, 90), 9000, 0.035));
	CHECK(within(hist__percentile(&h, 99), 9900, 0.035));
	CHECK(within(hist__percentile(&h, 99.9), 9990, 0.035));
	CHECK(hist__percentile(&h, 0) == 1);
	CHECK(hist__percentile(&h, 100) == 10000);
	CHECK(hist__percentile(&h, -5) == 1);
	CHECK(hist__percentile(&h, 250) == 10000);
	CHECK(hist__percentile(&h, NAN) == 1);
	/* small values are exact: rank 10 of 1..10000 is 10 */
	CHECK(hist__percentile(&h, 0.1) == 10);
}

static void test_bimodal(void)
{
	struct hist h;

	hist__reset(&h);
	hist__add(&h, 100, 900);
	hist__add(&h, 1000000, 100);
	CHECK(hist__count(&h) == 1000);
	CHECK(hist__sum(&h) == 900 * 100 + 100 * 1000000ULL);
	CHECK(within(hist__percentile(&h, 50), 100, 0.035));
	CHECK(within(hist__percentile(&h, 90), 100, 0.035));
	CHECK(within(hist__percentile(&h, 90.1), 1000000, 0.035));
	/* narrowed to [bucket low, max] */
	CHECK(within(hist__percentile(&h, 99), 1000000, 0.035));
	CHECK(hist__percentile(&h, 99) <= 1000000);
	CHECK(hist__percentile(&h, 100) == 1000000);
}

static void test_single_and_extremes(void)
{
	struct hist h;

	hist__reset(&h);
	hist__add(&h, 12345, 1);
	CHECK(hist__percentile(&h, 1) == 12345);
	CHECK(hist__percentile(&h, 50) == 12345);
	CHECK(hist__percentile(&h, 100) == 12345);

	hist__reset(&h);
	hist__add(&h, UINT64_MAX, 1);
	hist__add(&h, UINT64_MAX, 3);
	CHECK(hist__count(&h) == 4);
	CHECK(hist__sum(&h) == UINT64_MAX); /* saturated, not wrapped */
	CHECK(hist__percentile(&h, 50) == UINT64_MAX);
	hist__add(&h, 0, 1);
	CHECK(hist__min(&h) == 0 && hist__percentile(&h, 1) == 0);
}

static void test_merge(void)
{
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct hist *all = malloc(sizeof(*all));
	uint64_t v;

	hist__reset(a);
	hist__reset(b);
	hist__reset(all);
	for (v = 1; v <= 10000; v++) {
		hist__add(v <= 5000 ? b : a, v * 1000, 1);
		hist__add(all, v * 1000, 1);
	}
	hist__merge(a, b);
	CHECK(memcmp(a, all, sizeof(*a)) == 0);
	CHECK(hist__min(a) == 1000 && hist__max(a) == 10000000);
	CHECK(hist__count(a) == 10000);
	CHECK(within(hist__percentile(a, 50), 5000000, 0.035));

	/* merging into an empty one copies min, not keeps 0 */
	hist__reset(b);
	hist__merge(b, a);
	CHECK(hist__min(b) == 1000);
	CHECK(memcmp(a, b, sizeof(*a)) == 0);
	free(a);
	free(b);
	free(all);
}

int main(void)
{
	test_bucket_values();
	test_bucket_tiling();
	test_log2();
	test_empty();
	test_uniform();
	test_bimodal();
	test_single_and_extremes();
	test_merge();
	return unit_done("histogram");
}
