// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-interval increases of cumulative per-CPU counters: each walk emits
 * what a key gained since the last (summed over CPUs), tells `finished`
 * whether the key grew, and deletes the keys `finished` lets go (their
 * count starts again from zero). Needs root: it makes a per-CPU BPF map. */
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
	int grew[4];   /* finished() saw grew: 1, not: 0, never called: -1 */
	uint32_t drop; /* finished() lets this key go */
};

static uint64_t key_id(const void *k)
{
	return *(const uint32_t *)k;
}

static void emit(void *ctx, const void *k, uint64_t delta)
{
	((struct walk_log *)ctx)->delta[*(const uint32_t *)k] = delta;
}

static bool finished(void *ctx, const void *k, bool grew)
{
	struct walk_log *log = ctx;
	uint32_t key = *(const uint32_t *)k;

	log->grew[key] = grew;
	return key == log->drop;
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

static uint64_t walk(struct hashmap *reported, int fd, struct walk_log *log,
		     uint32_t drop)
{
	struct delta_walk w = {
		.map_fd = fd,
		.key_size = sizeof(uint32_t),
		.key_id = key_id,
		.emit = emit,
		.finished = finished,
		.ctx = log,
	};

	memset(log, 0, sizeof(*log));
	memset(log->grew, -1, sizeof(log->grew));
	log->drop = drop;
	return deltas__walk(reported, &w);
}

int main(void)
{
	struct hashmap *reported = hashmap__new();
	uint64_t n = map_ncpus();
	struct walk_log log;
	uint32_t key;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "deltas_test",
			    sizeof(uint32_t), sizeof(uint64_t), 8, NULL);
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

	close(fd);
	hashmap__free(reported);
	return unit_done("deltas");
}
