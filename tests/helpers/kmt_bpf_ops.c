// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: N bpf() updates of a hash map of its own. While each
 * runs, its CPU holds bpf_prog_active, and the kernel runs no tracepoint
 * or kprobe program there (an interrupt's tracepoint, say): the runs a
 * collector misses, which the kernel counts in recursion_misses (6.7). */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>

int main(int argc, char **argv)
{
	__u64 value = 1;
	__u32 key;
	long n;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kmt_bpf_ops", sizeof(key),
			    sizeof(value), 1024, NULL);
	if (fd < 0) {
		perror("bpf_map_create");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		key = i % 1024;
		if (bpf_map_update_elem(fd, &key, &value, BPF_ANY)) {
			perror("bpf_map_update_elem");
			return 1;
		}
	}
	return 0;
}
