// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/deltas.h"
#include "lib/hashmap.h"
#include "lib/maps.h"
#include "lib/xalloc.h"

#define KEY_MAX 64
#define BATCH 256

/* This walk's totals, one entry per key. */
struct delta_totals {
	const struct delta_walk *w;
	struct hashmap *index; /* key id -> entry + 1 */
	unsigned char *keys; /* n keys of w->key_size bytes */
	struct total {
		uint64_t count;
		bool in_map;
		bool held; /* has counts in front of the map */
	} * t;
	size_t n, cap;
	bool hold_all;
};

static struct total *entry(struct delta_totals *t, const void *key)
{
	uint64_t id = t->w->key_id(key), *at = hashmap__find(t->index, id);

	if (at)
		return &t->t[*at - 1];
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->keys = xrealloc(t->keys, t->cap * t->w->key_size);
		t->t = xrealloc(t->t, t->cap * sizeof(*t->t));
	}
	memcpy(t->keys + t->n * t->w->key_size, key, t->w->key_size);
	t->t[t->n] = (struct total){ 0 };
	hashmap__set(t->index, id, ++t->n);
	return &t->t[t->n - 1];
}

static uint64_t cpu_sum(const uint64_t *values)
{
	uint64_t sum = 0;

	for (int i = 0; i < map_ncpus(); i++)
		sum += values[i];
	return sum;
}

static void add_from_map(struct delta_totals *t, const void *key,
			 const uint64_t *values)
{
	struct total *e = entry(t, key);

	e->count += cpu_sum(values);
	e->in_map = true;
}

/* Key by key, where the kernel has no batch lookups. */
static void read_map_by_key(struct delta_totals *t)
{
	unsigned char key[KEY_MAX], next[KEY_MAX];
	uint64_t values[map_ncpus()];
	bool more;

	more = bpf_map_get_next_key(t->w->map_fd, NULL, next) == 0;
	while (more) {
		memcpy(key, next, t->w->key_size);
		more = bpf_map_get_next_key(t->w->map_fd, key, next) == 0;
		if (bpf_map_lookup_elem(t->w->map_fd, key, values) == 0)
			add_from_map(t, key, values);
	}
}

/* Batch lookups: a syscall per BATCH keys, not two per key. */
static void read_map(struct delta_totals *t)
{
	size_t ks = t->w->key_size, nvals = (size_t)map_ncpus();
	uint32_t batch = BATCH, count, token_in, token_out;
	unsigned char *keys = NULL;
	uint64_t *values = NULL;
	bool first = true;
	int err;

	do {
		keys = xrealloc(keys, batch * ks);
		values = xrealloc(values, batch * nvals * sizeof(*values));
		count = batch;
		err = bpf_map_lookup_batch(t->w->map_fd,
					   first ? NULL : &token_in, &token_out,
					   keys, values, &count, NULL);
		if (err && err != -ENOENT) {
			if (err == -ENOSPC && batch < (1 << 20)) {
				batch *= 2; /* a bucket holds more keys */
				continue;
			}
			if (first) /* no batch lookups here */
				read_map_by_key(t);
			break;
		}
		for (uint32_t i = 0; i < count; i++)
			add_from_map(t, keys + i * ks, values + i * nvals);
		token_in = token_out;
		first = false;
	} while (!err);
	free(keys);
	free(values);
}

void deltas__add(struct delta_totals *t, const void *key, uint64_t count)
{
	struct total *e = entry(t, key);

	e->count += count;
	e->held = true;
}

void deltas__hold_all(struct delta_totals *t)
{
	t->hold_all = true;
}

/* Emits what count has over what was reported for key (never less: a
 * lower total is one the kernel is moving) and remembers it. */
static uint64_t report(struct hashmap *reported, const struct delta_walk *w,
		       const void *key, uint64_t count, bool *grew)
{
	uint64_t id = w->key_id(key), *seen = hashmap__find(reported, id);
	uint64_t before = seen ? *seen : 0;

	*grew = count > before;
	if (!*grew)
		return 0;
	w->emit(w->ctx, key, count - before);
	hashmap__set(reported, id, count);
	return count - before;
}

/* A finished key leaves the map; what was added to it since it was read
 * goes out first (lookup-and-delete: nothing added meanwhile is lost). */
static uint64_t retire(struct hashmap *reported, const struct delta_walk *w,
		       const void *key)
{
	uint64_t values[map_ncpus()], sum = 0;
	bool grew;

	if (bpf_map_lookup_and_delete_elem(w->map_fd, key, values) == 0)
		sum = report(reported, w, key, cpu_sum(values), &grew);
	else
		bpf_map_delete_elem(w->map_fd, key); /* before 5.14 */
	hashmap__delete(reported, w->key_id(key));
	return sum;
}

uint64_t deltas__walk(struct hashmap *reported, const struct delta_walk *w)
{
	struct delta_totals t = { .w = w, .index = hashmap__new() };
	unsigned char *gone = NULL;
	size_t ngone = 0;
	uint64_t sum = 0;

	if (w->key_size > KEY_MAX)
		return 0;
	read_map(&t);
	if (w->cached)
		w->cached(w->ctx, &t);
	gone = xmalloc((t.n + 1) * w->key_size);
	for (size_t i = 0; i < t.n; i++) {
		const void *key = t.keys + i * w->key_size;
		bool grew;

		sum += report(reported, w, key, t.t[i].count, &grew);
		/* Deleting while walking would restart the walk: later. */
		if (w->finished(w->ctx, key, grew) && !t.t[i].held &&
		    t.t[i].in_map && !t.hold_all)
			memcpy(gone + ngone++ * w->key_size, key, w->key_size);
	}
	for (size_t i = 0; i < ngone; i++)
		sum += retire(reported, w, gone + i * w->key_size);
	free(gone);
	free(t.keys);
	free(t.t);
	hashmap__free(t.index);
	return sum;
}
