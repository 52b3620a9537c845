// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark workload: two processes pass one byte back and forth over a
 * pair of pipes for SECONDS, so each side blocks in read() at every turn:
 * two context switches per round trip. Prints the round trips per second.
 * --cpu N pins both to CPU N, so every turn is a switch on one CPU.
 * --work NS makes each side compute NS nanoseconds per message, as a
 * service does between its reads: it sets the switch rate (0: as fast as
 * switches go, the worst case). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/pin.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void compute(double ns)
{
	double until;

	if (ns <= 0)
		return;
	until = now() + ns / 1e9;
	while (now() < until)
		;
}

/* The child echoes every byte until its input closes. */
static void echo(int in, int out, double work_ns)
{
	char b;

	while (read(in, &b, 1) == 1) {
		compute(work_ns);
		if (write(out, &b, 1) != 1)
			break;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int to[2], from[2], cpu = -1;
	double secs, start, end, work_ns = 0;
	long trips = 0;
	pid_t child;
	char b = 'x';

	if (argc < 2 || argc % 2) {
		fprintf(stderr, "usage: %s SECONDS [--cpu N] [--work NS]\n",
			argv[0]);
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--cpu") == 0)
			cpu = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--work") == 0)
			work_ns = atof(argv[i + 1]);
		else {
			fprintf(stderr, "%s: unknown option %s\n", argv[0],
				argv[i]);
			return 2;
		}
	}
	secs = atof(argv[1]);
	if (cpu >= 0)
		pin(cpu);
	if (pipe(to) || pipe(from)) {
		perror("pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(to[1]);
		close(from[0]);
		echo(to[0], from[1], work_ns);
	}
	close(to[0]);
	close(from[1]);
	start = now();
	end = start + secs;
	/* the clock is read every 1024 trips: its cost stays out */
	while ((trips & 1023) || now() < end) {
		compute(work_ns);
		if (write(to[1], &b, 1) != 1 || read(from[0], &b, 1) != 1)
			break;
		trips++;
	}
	end = now();
	close(to[1]);
	waitpid(child, NULL, 0);
	printf("round_trips %ld seconds %.3f rate %.0f switches_per_s %.0f\n",
	       trips, end - start, trips / (end - start),
	       2 * trips / (end - start));
	return 0;
}
