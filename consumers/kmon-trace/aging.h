/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Items kept for a while by key, oldest first out: a ring by arrival,
 * bounded in number and in age, and a map from key into it. An item
 * taken out of the middle is marked dead and skipped when the head
 * reaches it. kmon-trace --fleet keeps its waiting exchange ends
 * (exchanges.c) and its forwards (forwards.c) in one each. */
#ifndef KMON_TRACE_AGING_H
#define KMON_TRACE_AGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aging;

/* At most max items (rounded up to a power of two) of item_size bytes. */
struct aging *aging__new(size_t max, size_t item_size);
void aging__free(struct aging *a); /* NULL-safe */
/* A copy of item under key, read from partition (of a Kafka topic: a
 * key already there now finds this one). When full the oldest goes
 * first: returns whether it was still there. */
bool aging__add(struct aging *a, uint64_t key, int32_t partition,
		const void *item, uint64_t now_ns);
void *aging__find(const struct aging *a, uint64_t key);
void aging__forget(struct aging *a, uint64_t key);
/* Forgets the items added before cutoff_ns; returns how many. */
size_t aging__expire(struct aging *a, uint64_t cutoff_ns);
/* Every item of a partition for which revoked(partition, ctx) is true
 * goes to fn, then is forgotten; returns how many. */
size_t aging__take(struct aging *a,
		   bool (*revoked)(int32_t partition, void *ctx),
		   void (*fn)(const void *item, void *ctx), void *ctx);
size_t aging__count(const struct aging *a);

#endif
