/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Syscall counters: event ABI shared by BPF and user space. */
#ifndef KMON_SYSCALL_H
#define KMON_SYSCALL_H

#define SYSCALL_MAX_KEYS 16384
#define SYSCALL_NR_MAX 1024 /* syscall numbers counted: 0 .. NR_MAX-1 */

struct syscall_key {
	__u32 pid; /* tgid */
	__u32 nr;
	/* The service when counted: names stay right if the pid is reused
	 * before user space reads the count. */
	__u32 svc;
	__u32 pad;
};

/* Each CPU's direct-mapped slots (bpf/syscall.bpf.c): a (process,
 * syscall) counted there until another one takes its slot. */
#define SYSCALL_SLOT_BITS 10
#define SYSCALL_SLOTS (1 << SYSCALL_SLOT_BITS)
#define SYSCALL_SVC_NONE 0xffffffffu /* the process is not monitored */

struct syscall_slot {
	/* odd while the slot changes hands; 64 bits: clang 14 makes a
	 * fetching (ordered) add of 32 bits only with -mcpu=v3 */
	__u64 seq;
	__u32 pid; /* tgid */
	__u32 nr;
	__u32 svc; /* as in syscall_key, or SYSCALL_SVC_NONE */
	__u32 pad;
	__u64 gen; /* pid_service_gen when it was filled */
	__u64 count; /* counted here, not yet in syscall_counts */
};

enum syscall_stat {
	/* Syscalls lost: no room for a new (pid, nr) (or no slot for the
	 * CPU). The ones counted are the sum of the counts: no second
	 * counter on the hot path. */
	SYSCALL_MAP_FULL,
	SYSCALL_NR_STATS,
};

#endif
