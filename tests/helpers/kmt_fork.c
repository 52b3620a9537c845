// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: forks exactly N children (each exits at once) and reaps
 * them, so a test can check that sched:sched_process_fork was counted
 * exactly N times for this process. With --wait FILE it first waits for
 * FILE to exist (so it can be started, and known to kmond, before the
 * burst). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("kmt_fork: fork");
			return 1;
		}
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid) {
			perror("kmt_fork: waitpid");
			return 1;
		}
	}
	return 0;
}
