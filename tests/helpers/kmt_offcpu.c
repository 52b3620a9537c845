// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: sleeps MS milliseconds N times from inside the function
 * kmt_offcpu_block, which issues the nanosleep syscall itself: the
 * innermost user frame of every block is that function, whatever libc
 * was built with, so a test can find it symbolized from this binary's
 * ELF symbols. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void kmt_offcpu_block(const struct timespec *ts)
{
#if defined(__x86_64__)
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_nanosleep), "D"(ts), "S"(0L)
		     : "rcx", "r11", "memory");
	(void)ret;
#else
	syscall(SYS_nanosleep, ts, NULL);
#endif
}

int main(int argc, char **argv)
{
	struct timespec ts;
	long ms, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MS N\n", argv[0]);
		return 2;
	}
	ms = atol(argv[1]);
	n = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	for (long i = 0; i < n; i++)
		kmt_offcpu_block(&ts);
	return 0;
}
