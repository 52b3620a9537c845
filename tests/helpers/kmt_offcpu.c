// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: sleeps MS milliseconds N times from inside the function
 * kmt_offcpu_block, which issues the nanosleep syscall itself: the
 * innermost user frame of every block is that function, whatever libc
 * was built with, so a test can find it symbolized from this binary's
 * ELF symbols. --two alternates with kmt_offcpu_block_other: one thread
 * blocking from two places in turn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NANOSLEEP(ts)                                                     \
	do {                                                              \
		long ret_;                                                \
		asm volatile("syscall"                                    \
			     : "=a"(ret_)                                 \
			     : "0"((long)SYS_nanosleep), "D"(ts), "S"(0L) \
			     : "rcx", "r11", "memory");                   \
		(void)ret_;                                               \
	} while (0)
#elif defined(__aarch64__)
/* Not libc's syscall(): a leaf without a frame record, so the kernel's
 * frame-pointer walk would skip its caller (only in the link register). */
#define NANOSLEEP(ts)                                        \
	do {                                                 \
		register long x8_ asm("x8") = SYS_nanosleep; \
		register long x0_ asm("x0") = (long)(ts);    \
		register long x1_ asm("x1") = 0;             \
		asm volatile("svc #0"                        \
			     : "+r"(x0_)                     \
			     : "r"(x8_), "r"(x1_)            \
			     : "memory");                    \
	} while (0)
#else
#define NANOSLEEP(ts) syscall(SYS_nanosleep, ts, NULL)
#endif

/* Not static: a static function may be cloned under another name
 * (.constprop, .isra), and the tests look for these. */
void kmt_offcpu_block(const struct timespec *ts);
void kmt_offcpu_block_other(const struct timespec *ts);

__attribute__((noinline)) void kmt_offcpu_block(const struct timespec *ts)
{
	NANOSLEEP(ts);
}

__attribute__((noinline)) void kmt_offcpu_block_other(const struct timespec *ts)
{
	NANOSLEEP(ts);
}
int main(int argc, char **argv)
{
	struct timespec ts;
	long ms, n;
	int two;

	two = argc == 4 && strcmp(argv[3], "--two") == 0;
	if (argc != 3 && !two) {
		fprintf(stderr, "usage: %s MS N [--two]\n", argv[0]);
		return 2;
	}
	ms = atol(argv[1]);
	n = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	for (long i = 0; i < n; i++) {
		if (two && i % 2)
			kmt_offcpu_block_other(&ts);
		else
			kmt_offcpu_block(&ts);
	}
	return 0;
}
