// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: blocks 2 ms in each of N distinct user stacks, so that
 * an off-CPU test knows every stack there was. Block i is below a chain
 * of LEVELS calls, each from one of two call sites (the bits of i),
 * under a frame padded by i: no two block at the same stack pointer,
 * since offcpu walks a thread's user stack again only when the thread
 * entered the kernel from another place. Built with frame pointers, and
 * the sleep is the syscall itself, so the walk goes through every frame.
 * It waits 300 ms before the first.
 *   kmt_stacks N      (N at most 1 << LEVELS) */
#define _GNU_SOURCE
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LEVELS 10

static void down(unsigned i, int level);

static void __attribute__((noinline)) block(void)
{
	struct timespec ts = { 0, 2000000 };

	syscall(SYS_nanosleep, &ts, NULL);
}

/* The two ways down, called from two sites of down(): the return
 * addresses tell the chains apart (the compiler may fold the two
 * functions into one). The empty asm after each call keeps it from
 * becoming a jump. */
static void __attribute__((noinline)) via_zero(unsigned i, int level)
{
	down(i, level + 1);
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) via_one(unsigned i, int level)
{
	down(i, level + 1);
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) down(unsigned i, int level)
{
	if (level == LEVELS)
		block();
	else if (i >> level & 1)
		via_one(i, level);
	else
		via_zero(i, level);
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) padded(unsigned i)
{
	volatile char *pad = alloca(16 * (i + 1));

	pad[0] = 0;
	down(i, 0);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;

	if (n <= 0 || n > 1L << LEVELS) {
		fprintf(stderr, "usage: %s N (1 to %d)\n", argv[0],
			1 << LEVELS);
		return 2;
	}
	/* first a pause: kmond selects it by its comm once it sees the exec */
	usleep(300000);
	for (unsigned i = 0; i < n; i++)
		padded(i);
	return 0;
}
