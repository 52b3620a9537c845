/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-interval increases of cumulative per-CPU counters. The kernel only
 * ever adds to a key's count (no read-and-reset race can lose an event);
 * user space remembers what it reported and emits the difference. */
#ifndef KMON_DELTAS_H
#define KMON_DELTAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap;
struct delta_totals;

struct delta_walk {
	int map_fd; /* BPF_MAP_TYPE_PERCPU_HASH of u64 counts */
	size_t key_size; /* at most 64 bytes */
	/* A unique number per key: where the reported count is kept. */
	uint64_t (*key_id)(const void *key);
	/* The count of key grew by delta since the last walk. */
	void (*emit)(void *ctx, const void *key, uint64_t delta);
	/* key will count no more (its process exited...): it is deleted,
	 * after its last delta went out. grew: whether it had one this walk. */
	bool (*finished)(void *ctx, const void *key, bool grew);
	/* Optional: counts kept in front of the map, which the kernel moves
	 * into it later (the syscall collector's per-CPU slots). Called after
	 * the map was read, it gives them with deltas__add(). */
	void (*cached)(void *ctx, struct delta_totals *t);
	void *ctx;
};

/* Walks the map once; returns the sum of the deltas emitted. A key's
 * total is its count in the map plus what cached() added; a total read
 * lower than the one reported (the kernel moved counts into the map
 * between the two reads) waits until it is higher. */
uint64_t deltas__walk(struct hashmap *reported, const struct delta_walk *w);

/* For cached(): count more for key, which stays in the map (it is not
 * deleted, finished or not) while it has counts in front of it. */
void deltas__add(struct delta_totals *t, const void *key, uint64_t count);
/* For cached(): some of those counts could not be read (they were on the
 * move): no key is deleted this walk. */
void deltas__hold_all(struct delta_totals *t);

#endif
