// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: sleeps MS milliseconds N times with nanosleep, so an
 * off-CPU test knows how long and in which call the process was off-CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	long ms, n, i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MS N\n", argv[0]);
		return 2;
	}
	ms = atol(argv[1]);
	n = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
