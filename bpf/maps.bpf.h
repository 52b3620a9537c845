/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Map idioms every BPF program of kmond uses: its stats counters and
 * entries made on first use. */
#ifndef KMON_MAPS_BPF_H
#define KMON_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* One load of x, now: another CPU (or a program that comes in between on
 * this one) may change it meanwhile. */
#define KMON_READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define KMON_WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* No load or store moves across it (the compiler's order only). */
#define KMON_COMPILER_BARRIER() asm volatile("" ::: "memory")

/* The per-CPU u64 counters a program reports in kmond's stats record,
 * one slot per stat (user space sums the CPUs). */
#define KMON_STATS_MAP(name, nstats)                     \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, nstats);             \
		__type(key, __u32);                      \
		__type(value, __u64);                    \
	} name SEC(".maps")

/* Adds n to a stats slot. The slot is this CPU's, but a program of ours
 * running in softirq can interrupt one in process context on the same
 * CPU: the add is atomic so neither update is lost. */
static __always_inline void stat_add(void *stats, __u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(stats, &stat);

	if (v)
		__sync_fetch_and_add(v, n);
}

static __always_inline void stat_inc(void *stats, __u32 stat)
{
	stat_add(stats, stat, 1);
}

/* The value at key, made from init if there is none. Two CPUs may make it
 * at once: BPF_NOEXIST lets the first one win and the other looks up the
 * winner's. NULL when it could not be made, *err then saying why (-E2BIG:
 * the map full; -ENOMEM: an allocation failed, in a map not preallocated). */
static __always_inline void *lookup_or_try_init_err(void *map, const void *key,
						    const void *init, long *err)
{
	void *v = bpf_map_lookup_elem(map, key);

	*err = 0;
	if (v)
		return v;
	*err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

static __always_inline void *lookup_or_try_init(void *map, const void *key,
						const void *init)
{
	long err;

	return lookup_or_try_init_err(map, key, init, &err);
}

/* Counts a thing once in *count, by its flag (0: not counted): the
 * compare and swap lets only one of several CPUs count it, or take it
 * back, so the count never falls below the things counted. */
static __always_inline void count_once(__u64 *flag, __u64 *count)
{
	if (!__sync_val_compare_and_swap(flag, 0, 1))
		__sync_fetch_and_add(count, 1);
}

static __always_inline void uncount_once(__u64 *flag, __u64 *count)
{
	if (__sync_val_compare_and_swap(flag, 1, 0) == 1)
		__sync_fetch_and_add(count, -1);
}

#endif
