// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF cost of request paths per request, alone: runs
 * bench/tcp_link_bench.bpf.c (the tcp collector's linking code in a loop,
 * timed in the kernel) with linking and without, alternating, ROUNDS
 * times TURNS turns, and prints the median and minimum ns per turn of
 * the difference. A turn is one server request that makes one call.
 *   build/bench/tcp_link_bench [ROUNDS] [TURNS]  (as root) */
#include <linux/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/tcp/tcp.h"
#include "tcp_link_bench.skel.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double run(struct tcp_link_bench_bpf *s, int fd, __u32 linking)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	s->bss->linking = linking;
	if (bpf_prog_test_run_opts(fd, &opts)) {
		fprintf(stderr, "test run: %s\n", strerror(errno));
		exit(1);
	}
	return (double)s->bss->elapsed_ns / s->bss->turns;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 21;
	long turns = argc > 2 ? atol(argv[2]) : 1000000;
	struct tcp_link_bench_bpf *s;
	double *d;
	int fd;

	if (rounds < 1 || turns < 1 || turns > (1 << 23)) {
		fprintf(stderr, "usage: %s [ROUNDS] [TURNS <= 8388608]\n",
			argv[0]);
		return 2;
	}
	s = tcp_link_bench_bpf__open();
	if (!s) {
		fprintf(stderr, "open: %s\n", strerror(errno));
		return 1;
	}
	s->rodata->id_prefix = 1ULL << TCP_ID_SERIAL_BITS;
	s->rodata->id_cpu_bits = 8;
	if (tcp_link_bench_bpf__load(s)) {
		fprintf(stderr, "load: %s\n", strerror(errno));
		tcp_link_bench_bpf__destroy(s);
		return 1;
	}
	fd = bpf_program__fd(s->progs.tcp_link_bench);
	s->bss->turns = turns;
	d = calloc(rounds, sizeof(*d));
	run(s, fd, 1); /* warm: the thread's entry made */
	for (int r = 0; r < rounds; r++) {
		double floor = run(s, fd, 0);

		d[r] = run(s, fd, 1) - floor;
	}
	qsort(d, rounds, sizeof(*d), cmp);
	printf("linking: %.1f ns median, %.1f ns min per server request with "
	       "one call (%d rounds of %ld); wrong links %llu\n",
	       d[rounds / 2], d[0], rounds, turns,
	       (unsigned long long)s->bss->wrong);
	free(d);
	tcp_link_bench_bpf__destroy(s);
	return 0;
}
