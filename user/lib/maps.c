// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/maps.h"
#include "lib/xalloc.h"

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

size_t map_sweep(int fd, size_t key_size, size_t value_size,
		 bool (*visit)(void *ctx, const void *key, const void *value),
		 void *ctx, size_t *deleted)
{
	char *key = xmalloc(key_size), *next = xmalloc(key_size);
	char *value = value_size ? xmalloc(value_size) : NULL, *gone = NULL;
	size_t nkeys = 0, ngone = 0, cap = 0;
	bool more;

	more = bpf_map_get_next_key(fd, NULL, next) == 0;
	while (more) {
		memcpy(key, next, key_size);
		more = bpf_map_get_next_key(fd, key, next) == 0;
		if (value && bpf_map_lookup_elem(fd, key, value))
			continue; /* deleted since */
		nkeys++;
		if (!visit(ctx, key, value))
			continue;
		if (ngone == cap) {
			cap = cap ? cap * 2 : 64;
			gone = xrealloc(gone, cap * key_size);
		}
		memcpy(gone + ngone++ * key_size, key, key_size);
	}
	for (size_t i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, gone + i * key_size);
	free(gone);
	free(value);
	free(next);
	free(key);
	if (deleted)
		*deleted = ngone;
	return nkeys;
}
