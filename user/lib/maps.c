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

int cpu_list_bound(FILE *f)
{
	int c, n = -1, last = -1;

	/* ranges in order: the last number is the highest */
	while ((c = fgetc(f)) != EOF) {
		if (c >= '0' && c <= '9')
			n = (n < 0 ? 0 : n * 10) + c - '0';
		else if (n >= 0)
			last = n, n = -1;
	}
	if (n >= 0)
		last = n;
	return last >= 0 ? last + 1 : -1;
}

int map_cpu_id_bound(void)
{
	static int bound;
	FILE *f;

	if (bound)
		return bound;
	f = fopen("/sys/devices/system/cpu/possible", "r");
	bound = f ? cpu_list_bound(f) : -1;
	if (f)
		fclose(f);
	if (bound <= 0)
		bound = map_ncpus();
	return bound;
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
