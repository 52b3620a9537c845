/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A clock's time as one number of nanoseconds, the unit of every
 * timestamp and interval kmond keeps. CLOCK_MONOTONIC is the clock of
 * bpf_ktime_get_ns(), so mono_ns() compares with what BPF programs
 * record; records carry CLOCK_REALTIME. */
#ifndef KMON_CLOCK_H
#define KMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
