// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The hash map against a plain array of the same keys: random sets and
 * deletes (key 0, which marks an empty slot, among them), through growth
 * and backward-shift deletion, then iteration over every key once. */
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "unit.h"

#define KEYS 4096 /* the key space: dense enough to collide, set, delete */
#define OPS 200000

static void test_against_array(void)
{
	static uint64_t want[KEYS];
	static bool present[KEYS];
	struct hashmap *m = hashmap__new();
	uint64_t rng = 7, key, value, *v;
	size_t n = 0, pos = 0, seen = 0;
	int op, bad = 0;

	for (op = 0; op < OPS; op++) {
		uint64_t r = splitmix64_next(&rng);
		/* key i is i * 2^40 for half of them: same low bits */
		uint64_t k = r % KEYS, mapped = k & 1 ? k << 40 : k;

		if (r >> 62) {
			hashmap__set(m, mapped, r);
			n += !present[k];
			present[k] = true;
			want[k] = r;
		} else {
			bad += hashmap__delete(m, mapped) != present[k];
			n -= present[k];
			present[k] = false;
		}
		if (op % 1000 == 0) {
			for (k = 0; k < KEYS; k++) {
				mapped = k & 1 ? k << 40 : k;
				v = hashmap__find(m, mapped);
				bad += present[k] ? !v || *v != want[k] : !!v;
			}
			bad += hashmap__count(m) != n;
		}
	}
	CHECK(bad == 0);
	while (hashmap__next(m, &pos, &key, &value)) {
		uint64_t k = key >= KEYS ? key >> 40 : key;

		bad += k >= KEYS || !present[k] || want[k] != value;
		seen++;
	}
	CHECK(bad == 0);
	CHECK(seen == n);
	hashmap__free(m);
}

static void test_zero_key(void)
{
	struct hashmap *m = hashmap__new();
	uint64_t key, value;
	size_t pos = 0;

	CHECK(!hashmap__find(m, 0));
	hashmap__set(m, 0, 5);
	hashmap__set(m, 64, 6);
	CHECK(hashmap__find(m, 0) && *hashmap__find(m, 0) == 5);
	CHECK(hashmap__count(m) == 2);
	CHECK(hashmap__next(m, &pos, &key, &value) && key == 64 && value == 6);
	CHECK(hashmap__next(m, &pos, &key, &value) && key == 0 && value == 5);
	CHECK(!hashmap__next(m, &pos, &key, &value));
	CHECK(hashmap__delete(m, 0) && !hashmap__delete(m, 0));
	CHECK(!hashmap__find(m, 0) && hashmap__count(m) == 1);
	hashmap__free(m);
}

int main(void)
{
	test_against_array();
	test_zero_key();
	return unit_done("hashmap");
}
