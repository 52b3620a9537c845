// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/maps.h"

int map_ncpus(void)
{
	static int ncpus;

	if (!ncpus) {
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			ncpus = 1;
	}
	return ncpus;
}

uint64_t map_percpu_sum(int fd, const void *key)
{
	int ncpus = map_ncpus();
	uint64_t values[ncpus], sum = 0;

	if (bpf_map_lookup_elem(fd, key, values))
		return 0;
	for (int i = 0; i < ncpus; i++)
		sum += values[i];
	return sum;
}
