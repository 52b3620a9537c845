/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* For the test workloads (tests/helpers): the calling thread on one CPU.
 * Needs _GNU_SOURCE before the first include. */
#ifndef KMT_PIN_H
#define KMT_PIN_H

#include <sched.h>
#include <stdio.h>

static inline void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

#endif
