// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Keeps the kernel's BPF run-time statistics on (run_time_ns, run_cnt of
 * every program) for as long as it runs, through a BPF_ENABLE_STATS fd:
 * unlike kernel.bpf_stats_enabled, which any other benchmark on a shared
 * machine may switch off in the middle of a measurement, the fd's hold
 * ends only with this process. Says "on" on stdout once they are on.
 *   bpf_stats_on       (until SIGTERM or SIGINT) */
#include <bpf/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	int fd;

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		fprintf(stderr, "bpf_stats_on: %s\n", strerror(-fd));
		return 1;
	}
	printf("on\n");
	fflush(stdout);
	while (!stop)
		pause();
	close(fd);
	return 0;
}
