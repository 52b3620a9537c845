// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: calls getppid exactly N times, so a test can check that
 * kmond counted exactly N. With --wait FILE it first waits for FILE to
 * exist (so it can be started, and its pid selected, before kmond). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n;

	if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--wait") == 0)) {
		fprintf(stderr, "usage: %s N [--wait FILE]\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	if (argc == 4) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		while (access(argv[3], F_OK) != 0)
			nanosleep(&ts, NULL);
	}
	/* The raw syscall: libc must not be able to cache or skip it. */
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
