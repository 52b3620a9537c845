// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-interval increases of cumulative per-CPU counters: each walk emits
 * what a key gained since the last (summed over CPUs), tells `finished`
 * whether the key grew, and deletes the keys `finished` lets go (their
 * count starts again from zero). Needs root: it makes a per-CPU BPF map. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/deltas.h"
#include "lib/hashmap.h"
#include "lib/maps.h"
#include "unit.h"

struct walk_log {
	uint64_t delta[4];
	int grew[4]; /* finished() saw grew: 1, not: 0, never called: -1 */
	uint32_t drop; /* finished() lets this key go */
	int fd;
	uint64_t late; /* finished() adds this per CPU to the key it drops */
	uint64_t cached[4]; /* counts in front of the map, per key */
};

static uint64_t key_id(const void *k)
{
	return *(const uint32_t *)k;
}

static void emit(void *ctx, const void *k, uint64_t delta)
{
	((struct walk_log *)ctx)->delta[*(const uint32_t *)k] = delta;
}

static void set(int fd, uint32_t key, uint64_t per_cpu);

static bool finished(void *ctx, const void *k, bool grew)
{
	struct walk_log *log = ctx;
	uint32_t key = *(const uint32_t *)k;

	log->grew[key] = grew;
	if (key == log->drop && log->late) /* the kernel counts on meanwhile */
		set(log->fd, key,
		    map_percpu_sum(log->fd, &key) / map_ncpus() + log->late);
	return key == log->drop;
}

static void cached(void *ctx, struct delta_totals *t)
{
	struct walk_log *log = ctx;

	for (uint32_t key = 0; key < 4; key++)
		if (log->cached[key])
			deltas__add(t, &key, log->cached[key]);
}

/* Sets key's count to per_cpu on every CPU (a sum of per_cpu * ncpus). */
static void set(int fd, uint32_t key, uint64_t per_cpu)
{
	int n = map_ncpus();
	uint64_t *v = calloc(n, sizeof(*v));

	for (int i = 0; v && i < n; i++)
		v[i] = per_cpu;
	CHECK(v && bpf_map_update_elem(fd, &key, v, BPF_ANY) == 0);
	free(v);
}

/* One walk; log's late and cached stay as the caller set them. */
static uint64_t walk(struct hashmap *reported, int fd, struct walk_log *log,
		     uint32_t drop)
{
	struct delta_walk w = {
		.map_fd = fd,
		.key_size = sizeof(uint32_t),
		.key_id = key_id,
		.emit = emit,
		.finished = finished,
		.cached = cached,
		.ctx = log,
	};

	memset(log->delta, 0, sizeof(log->delta));
	memset(log->grew, -1, sizeof(log->grew));
	log->drop = drop;
	log->fd = fd;
	return deltas__walk(reported, &w);
}

static uint64_t count_emitted;

static void count_emit(void *ctx, const void *k, uint64_t delta)
{
	(void)ctx;
	(void)k;
	count_emitted += delta;
}

static bool keep(void *ctx, const void *k, bool grew)
{
	(void)ctx;
	(void)k;
	(void)grew;
	return false;
}

/* More keys than one batch lookup returns: every one is read. */
static void test_many_keys(void)
{
	const uint32_t nkeys = 3000;
	struct hashmap *reported = hashmap__new();
	int bad = 0;
	struct delta_walk w = {
		.key_size = sizeof(uint32_t),
		.key_id = key_id,
		.emit = count_emit,
		.finished = keep,
	};

	w.map_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "deltas_many",
				  sizeof(uint32_t), sizeof(uint64_t), nkeys,
				  NULL);
	CHECK(w.map_fd >= 0);
	for (uint32_t key = 0; key < nkeys; key++) {
		uint64_t v[map_ncpus()];

		for (int i = 0; i < map_ncpus(); i++)
			v[i] = 1;
		bad += bpf_map_update_elem(w.map_fd, &key, v, BPF_ANY) != 0;
	}
	CHECK(bad == 0);
	count_emitted = 0;
	CHECK(deltas__walk(reported, &w) == nkeys * map_ncpus());
	CHECK(count_emitted == nkeys * map_ncpus());
	close(w.map_fd);
	hashmap__free(reported);
}

/* Counts in front of the map add to its keys' totals; a key with counts
 * there is not deleted, finished or not; a total read lower than one
 * reported (the counts were on their way into the map) emits nothing,
 * and nothing twice once they are in. */
static void test_cached(void)
{
	struct hashmap *reported = hashmap__new();
	struct walk_log log = { 0 };
	uint64_t n = map_ncpus(), v[n];
	uint32_t key = 3;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "deltas_cached",
			    sizeof(uint32_t), sizeof(uint64_t), 8, NULL);
	CHECK(fd >= 0);
	set(fd, 3, 1);
	log.cached[3] = 10;
	CHECK(walk(reported, fd, &log, 3) == n + 10);
	CHECK(map_percpu_sum(fd, &key) == n); /* held: still there */
	/* Read while moving: the slot is empty, the map has not its 10 yet. */
	log.cached[3] = 0;
	CHECK(walk(reported, fd, &log, 0) == 0 && log.grew[3] == 0);
	/* In the map now, and 2 more: the 2 go out, then the key is let go. */
	for (uint64_t i = 0; i < n; i++)
		v[i] = 1;
	v[0] += 12;
	CHECK(bpf_map_update_elem(fd, &key, v, BPF_ANY) == 0);
	CHECK(walk(reported, fd, &log, 3) == 2);
	CHECK(map_percpu_sum(fd, &key) == 0);
	close(fd);
	hashmap__free(reported);
}

int main(void)
{
	struct hashmap *reported = hashmap__new();
	uint64_t n = map_ncpus();
	struct walk_log log = { 0 };
	uint32_t key;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "deltas_test",
			    sizeof(uint32_t), sizeof(uint64_t), 8, NULL);
	if (fd == -EPERM) /* unprivileged BPF is off (Debian's default) */
		unit_skip("needs root (a BPF map)");
	if (fd < 0) {
		fprintf(stderr, "test_deltas: cannot make a BPF map (root?)\n");
		return 1;
	}
	set(fd, 1, 2);
	set(fd, 2, 5);
	CHECK(walk(reported, fd, &log, 0) == 7 * n);
	CHECK(log.delta[1] == 2 * n && log.delta[2] == 5 * n);
	CHECK(log.grew[1] == 1 && log.grew[2] == 1);

	/* Only key 2 counted since: only it grew; key 1 is let go. */
	set(fd, 2, 6);
	CHECK(walk(reported, fd, &log, 1) == n);
	CHECK(log.delta[1] == 0 && log.delta[2] == n);
	CHECK(log.grew[1] == 0 && log.grew[2] == 1);
	key = 1;
	CHECK(map_percpu_sum(fd, &key) == 0 &&
	      bpf_map_get_next_key(fd, NULL, &key) == 0 && key == 2 &&
	      bpf_map_get_next_key(fd, &key, &key) != 0); /* only 2 left */

	/* A key let go and counted again starts from zero, not from its old
	 * total. */
	set(fd, 1, 1);
	CHECK(walk(reported, fd, &log, 0) == n);
	CHECK(log.delta[1] == n && log.grew[1] == 1 && log.grew[2] == 0);
	CHECK(walk(reported, fd, &log, 0) == 0);
	CHECK(log.grew[1] == 0 && log.grew[2] == 0);

	/* Counted between the read and the delete of a key let go: still
	 * emitted, not lost with the key. */
	log.late = 3;
	CHECK(walk(reported, fd, &log, 1) == 3 * n);
	CHECK(log.delta[1] == 3 * n);
	log.late = 0;
	key = 1;
	CHECK(map_percpu_sum(fd, &key) == 0);

	close(fd);
	test_cached();
	hashmap__free(reported);
	test_many_keys();
	return unit_done("deltas");
}
