/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Process lifecycle events from the provider's BPF object to user space. */
#ifndef KMON_PROC_EVENTS_H
#define KMON_PROC_EVENTS_H

#include "filter.h"

#define PROC_EVENTS_BYTES (256 * 1024)

enum kmon_proc_event_type {
	KMON_PROC_FORK = 1,
	KMON_PROC_EXEC = 2,
	KMON_PROC_EXIT = 3,
	KMON_PROC_CGROUP = 4, /* moved to another cgroup */
};

struct kmon_proc_event {
	__u32 type;
	__u32 pid; /* tgid */
	__u32 ppid; /* fork: the parent's tgid */
	__u32 service; /* the service id the kernel gave it, 0 for none */
	char comm[KMON_COMM_LEN];
	__u64 ns; /* when, bpf_ktime_get_ns (CLOCK_MONOTONIC) */
};

/* Counters the provider's object keeps (index into provider_stats). */
enum provider_stat {
	PROVIDER_RINGBUF_LOST,
	PROVIDER_PIDS_FULL, /* pid_service had no room for a new pid */
	PROVIDER_NR_STATS,
};

#endif
