// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/deltas.h"
#include "lib/hashmap.h"
#include "lib/maps.h"
#include "lib/xalloc.h"

#define KEY_MAX 64

uint64_t deltas__walk(struct hashmap *reported, const struct delta_walk *w)
{
	unsigned char key[KEY_MAX], next[KEY_MAX], *gone = NULL;
	size_t ngone = 0, cap = 0;
	uint64_t sum = 0;
	bool more;

	if (w->key_size > KEY_MAX)
		return 0;
	more = bpf_map_get_next_key(w->map_fd, NULL, next) == 0;
	while (more) {
		uint64_t id, total, before, *seen;

		memcpy(key, next, w->key_size);
		more = bpf_map_get_next_key(w->map_fd, key, next) == 0;
		total = map_percpu_sum(w->map_fd, key);
		id = w->key_id(key);
		seen = hashmap__find(reported, id);
		before = seen ? *seen : 0;
		if (total > before) {
			w->emit(w->ctx, key, total - before);
			sum += total - before;
		}
		hashmap__set(reported, id, total);
		if (!w->finished(w->ctx, key, total > before))
			continue;
		/* Deleting while walking would restart the walk: later. */
		if (ngone == cap) {
			cap = cap ? cap * 2 : 64;
			gone = xrealloc(gone, cap * w->key_size);
		}
		memcpy(gone + ngone++ * w->key_size, key, w->key_size);
	}
	for (size_t i = 0; i < ngone; i++) {
		void *k = gone + i * w->key_size;

		bpf_map_delete_elem(w->map_fd, k);
		hashmap__delete(reported, w->key_id(k));
	}
	free(gone);
	return sum;
}
