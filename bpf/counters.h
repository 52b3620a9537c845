/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Event counters: ABI shared by BPF and user space. One generic program
 * is attached to every configured tracepoint (and function); the attach
 * cookie says which event fired. */
#ifndef KMON_COUNTERS_H
#define KMON_COUNTERS_H

#define COUNTERS_MAX_KEYS 16384
/* Distinct events over the collector's life: an id is never reused for
 * another event, so counts never change names across reloads. */
#define COUNTERS_MAX_EVENTS 512

struct counters_key {
	__u32 pid; /* tgid of the current task */
	__u32 event; /* the attach cookie: user space's event id */
	__u32 svc; /* its service when counted (names survive pid reuse) */
	__u32 pad;
};

enum counters_stat {
	COUNTERS_EVENTS, /* events counted */
	COUNTERS_MAP_FULL, /* events lost: no room for a new (pid, event) */
	COUNTERS_NR_STATS,
};

#endif
