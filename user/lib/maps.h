/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading BPF maps from user space. */
#ifndef KMON_MAPS_H
#define KMON_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Number of possible CPUs: the length of a per-CPU map value. */
int map_ncpus(void);
/* One more than the highest possible CPU's number, which
 * bpf_get_smp_processor_id() stays below: CPUs may be numbered with gaps
 * (possible 0-3,8-11), where map_ncpus() counts them. */
int map_cpu_id_bound(void);
/* One more than the highest number in a CPU list as the kernel writes
 * them ("0-3,8-11": 12); -1 when it has none. */
int cpu_list_bound(FILE *f);
/* Sum over CPUs of a per-CPU u64 value; 0 when key is absent. */
uint64_t map_percpu_sum(int fd, const void *key);

/* Calls visit on every key of map fd (key_size bytes) and, when
 * value_size is not 0, its value (an entry deleted in between is passed
 * over); then deletes the keys visit returned true for (deleting while
 * walking would restart the walk). Returns the keys visited, and in
 * *deleted (when not NULL) how many went. visit may forget what user
 * space keeps of a key it returns true for: no program deletes from the
 * maps walked so, and the walk visits each key once. */
size_t map_sweep(int fd, size_t key_size, size_t value_size,
		 bool (*visit)(void *ctx, const void *key, const void *value),
		 void *ctx, size_t *deleted);

#endif
