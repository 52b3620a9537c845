// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test helper: runs PROGRAM under a given pid, to reproduce pid reuse.
 * It sets /proc/sys/kernel/ns_last_pid to PID-1 and forks, retrying when
 * another fork on the machine took the pid first. Prints the pid. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_last_pid(long pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld", pid) > 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

int main(int argc, char **argv)
{
	long want;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PID PROGRAM [ARGS...]\n", argv[0]);
		return 2;
	}
	want = atol(argv[1]);
	for (int attempt = 0; attempt < 1000; attempt++) {
		pid_t child;
		int status;

		if (set_last_pid(want - 1)) {
			perror("ns_last_pid");
			return 1;
		}
		child = fork();
		if (child == 0) {
			if (getpid() != want)
				_exit(111);
			execv(argv[2], argv + 2);
			_exit(112);
		}
		if (child < 0)
			return 1;
		if (child != want) {
			waitpid(child, &status, 0);
			continue;
		}
		printf("%d\n", child);
		fflush(stdout);
		waitpid(child, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	fprintf(stderr, "could not get pid %ld\n", want);
	return 1;
}
