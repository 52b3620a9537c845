/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading BPF maps from user space. */
#ifndef KMON_MAPS_H
#define KMON_MAPS_H

#include <stdint.h>

/* Number of possible CPUs: the length of a per-CPU map value. */
int map_ncpus(void);
/* Sum over CPUs of a per-CPU u64 value; 0 when key is absent. */
uint64_t map_percpu_sum(int fd, const void *key);

#endif
