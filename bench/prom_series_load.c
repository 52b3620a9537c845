// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench/prometheus-scrape.sh's load: one call to each of N syscall
 * numbers from FIRST on (numbers no syscall has: each returns ENOSYS, but
 * the raw_syscalls tracepoint kmond counts them on still fires), so every
 * copy of this program under another name makes N syscall series. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long first, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FIRST N\n", argv[0]);
		return 2;
	}
	first = atol(argv[1]);
	n = atol(argv[2]);
	for (long nr = first; nr < first + n; nr++)
		syscall(nr);
	return 0;
}
