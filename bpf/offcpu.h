/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Off-CPU time: event ABI shared by BPF and user space.
 *
 * At a selected thread's switch-out the kernel notes when and where
 * (its stacks) it blocked, per thread; at its switch-in
 * the time off-CPU is added to an aggregate keyed by (process, service,
 * kernel stack, user stack) and to a per-process power-of-two histogram.
 * Nothing goes to user space per switch: it reads the cumulative
 * aggregates each interval and reports their increase.
 *
 * Walking a kernel stack costs more than the rest of a switch, and most
 * blocks are shorter than min_block: where the hook has the task (tp_btf),
 * the kernel stack is taken at switch-in, of the task still asleep, only
 * for blocks that count. The user stack can only be walked in the
 * process's own context: at switch-out. Kernel stacks are kept in a hash
 * map under a 64-bit hash of their frames; user stacks in a stack map. */
#ifndef KMON_OFFCPU_H
#define KMON_OFFCPU_H

#define OFFCPU_MAX_KEYS 16384
#define OFFCPU_MAX_STARTS 65536 /* threads off-CPU at once */
#define OFFCPU_MAX_HISTS 4096 /* processes */
#define OFFCPU_STACK_ENTRIES 8192 /* user stacks; and kernel stacks */
/* A stack map keeps one stack per slot (a hash of its frames) and
 * refuses a second: a user stack whose slot in the first map another
 * holds goes to a spare map, hashed to a slot of its own among few.
 * Its id there counts from OFFCPU_STACK_ENTRIES. */
#define OFFCPU_USTACK_SPARE 1024
#define OFFCPU_USTACK_IDS (OFFCPU_STACK_ENTRIES + OFFCPU_USTACK_SPARE)
#define OFFCPU_STACK_DEPTH 127 /* PERF_MAX_STACK_DEPTH */
#define OFFCPU_HIST_SLOTS 64 /* slot s holds [2^s, 2^(s+1)) ns; 0: 0 and 1 */

/* Which switch-outs start a block (the `state` setting). */
#define OFFCPU_STATE_SLEEP 0 /* TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE */
#define OFFCPU_STATE_ALL 1 /* preemption too: run-queue waits count */

#define OFFCPU_DEFAULT_MIN_BLOCK_NS 1000000ULL

struct offcpu_key {
	__u64 kstack; /* key in offcpu_kstacks, 0: none */
	__u32 pid; /* tgid */
	__u32 svc; /* service id when it blocked, 0: none */
	__s32 ustack; /* id in offcpu_ustacks, < 0: none */
	__u32 pad;
};

/* Cumulative: user space reports the increase per interval. */
struct offcpu_val {
	__u64 total_ns;
	__u64 count;
};

/* Where a thread entered the kernel from user space: if it blocks again
 * from the very same place (a server loop's read or epoll_wait: same
 * instruction and stack pointer), its user stack is taken to be the same
 * and is not walked again. Walks cost most of a switch (reading user
 * memory; a bogus frame pointer costs a page fault). The frame pointer is
 * left out on purpose: in code built without frame pointers it is any
 * value (a loop counter), which defeated the cache on every switch while
 * the walk it guards yields nothing past the first frame. The cost: two
 * callers reaching one blocking call at the same stack depth (siblings
 * with equal frames, calling one read() wrapper) share the first one's
 * stack, from the caller outwards. Keying on the frame pointer as well
 * would not tell most of those apart either. */
struct offcpu_uregs {
	__u64 ip, sp;
	__u32 gen; /* stack_gen when walked: a sweep may free the stack */
	__u32 pad;
};

/* A thread that is off-CPU now (by tid, or in the task: ts 0 = none). */
struct offcpu_start {
	__u64 ts; /* ns, monotonic */
	__u64 kstack; /* 0: none yet (taken at switch-in) */
	__u32 pid;
	__u32 svc;
	__s32 ustack;
	__u32 pad;
	struct offcpu_uregs
		uregs; /* task storage only: where ustack was walked */
};

struct offcpu_hist_key {
	__u32 pid;
	__u32 svc;
};

struct offcpu_hist {
	__u64 slots[OFFCPU_HIST_SLOTS]; /* cumulative counts */
};

enum offcpu_stat {
	OFFCPU_BLOCKS, /* blocks of min_block or more, counted */
	OFFCPU_START_FULL, /* blocks lost: no room to note their start */
	OFFCPU_KEY_FULL, /* blocks lost: no room for their key */
	OFFCPU_HIST_FULL, /* blocks missing from the histograms */
	OFFCPU_STACK_LOST, /* stacks lost (stack maps full, collision) */
	OFFCPU_STACK_SWEPT, /* user stacks not walked: a sweep under way */
	OFFCPU_NR_STATS,
};

#endif
