// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: sleeps MS milliseconds N times with nanosleep, so an
 * off-CPU test knows how long and in which call the process was off-CPU.
 * With FILE, each sleep's length as the process saw it (CLOCK_MONOTONIC
 * around the call, in ns) goes there, one a line: on a starved machine
 * (a qemu guest whose vCPU waits behind the host's work) a sleep lasts
 * longer than asked, and the test bounds what kmond measured by this. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	long long before;
	long ms, n, i;
	FILE *lengths = NULL;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s MS N [FILE]\n", argv[0]);
		return 2;
	}
	if (argc == 4 && !(lengths = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	ms = atol(argv[1]);
	n = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	for (i = 0; i < n; i++) {
		before = now_ns();
		nanosleep(&ts, NULL);
		if (lengths)
			fprintf(lengths, "%lld\n", now_ns() - before);
	}
	if (lengths && fclose(lengths) != 0) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}
