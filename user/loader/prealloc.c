// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/maps.h"
#include "loader/prealloc.h"

static uint64_t entry_bytes(const struct bpf_map *map)
{
	uint64_t value = bpf_map__value_size(map);
	enum bpf_map_type type = bpf_map__type(map);

	/* A per-CPU value is held once per possible CPU, 8-byte aligned. */
	if (type == BPF_MAP_TYPE_PERCPU_HASH ||
	    type == BPF_MAP_TYPE_LRU_PERCPU_HASH)
		value = (value + 7) / 8 * 8 * map_ncpus();
	return bpf_map__key_size(map) + value;
}

int prealloc__map(struct bpf_map *map, uint64_t budget)
{
	uint64_t each = entry_bytes(map), fit = budget / each;
	__u32 entries = bpf_map__max_entries(map);
	int err;

	err = bpf_map__set_map_flags(map, bpf_map__map_flags(map) &
						  ~BPF_F_NO_PREALLOC);
	if (!err && fit < entries) {
		log_info("%s: preallocated for the fallback hooks: %llu "
			 "entries of %u fit in %llu MiB",
			 bpf_map__name(map), (unsigned long long)fit, entries,
			 (unsigned long long)(budget >> 20));
		entries = fit ? fit : 1;
		err = bpf_map__set_max_entries(map, entries);
	}
	log_debug("%s: preallocated, %u entries", bpf_map__name(map), entries);
	return err;
}
