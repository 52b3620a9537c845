// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU time from sched_switch. A selected thread switching out notes
 * when and where it blocked (per tid); switching back in, its time off-CPU
 * is added to the aggregate of its (process, service, kernel stack, user
 * stack) and to its process's histogram. The hot path is every context
 * switch on the machine: an unselected thread costs one state read and one
 * pid_service lookup going out, one start-map lookup coming in. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "filter.bpf.h"
#include "histogram.h"
#include "offcpu.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17
#define ENOMEM 12
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD 0x80
/* The sched_switch tracepoint reports a dying task's exit_state. */
#define REPORT_EXIT_DEAD 0x10
#define REPORT_EXIT_ZOMBIE 0x20

/* Control, rewritten by user space on reload. */
__u64 min_block_ns = OFFCPU_DEFAULT_MIN_BLOCK_NS;
__u32 state_filter = OFFCPU_STATE_SLEEP;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_STARTS);
	__type(key, __u32); /* tid */
	__type(value, struct offcpu_start);
} offcpu_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_KEYS);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} offcpu_aggs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_HISTS);
	__type(key, struct offcpu_hist_key);
	__type(value, struct offcpu_hist);
} offcpu_hists SEC(".maps");

/* Kernel and user stacks share one map: ids are what keys hold. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, OFFCPU_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, OFFCPU_STACK_DEPTH * sizeof(__u64));
} offcpu_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_stats SEC(".maps");

static __always_inline void count_stat(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&offcpu_stats, &stat);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &offcpu_stacks, flags);

	/* -EFAULT (a kernel thread has no user stack) is no loss. */
	if (id == -ENOMEM || id == -EEXIST)
		count_stat(OFFCPU_STACK_LOST);
	return id;
}

/* --- switch-out: the current task is prev --- */

static __always_inline void block_starts(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct offcpu_start s = {};
	__u32 tid = (__u32)id;

	if (!tid) /* the idle task */
		return;
	s.pid = id >> 32;
	if (!kmon_selected_tgid(s.pid, &s.svc))
		return;
	s.kstack = stack_id(ctx, 0);
	s.ustack = stack_id(ctx, BPF_F_USER_STACK);
	s.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_starts, &tid, &s, BPF_ANY))
		count_stat(OFFCPU_START_FULL);
}

/* --- switch-in of next --- */

static __always_inline void add_hist(const struct offcpu_start *s, __u64 delta)
{
	static const struct offcpu_hist fresh;
	struct offcpu_hist_key hk = { .pid = s->pid, .svc = s->svc };
	struct offcpu_hist *h;
	__u32 slot = delta ? hist_log2(delta) : 0;

	h = bpf_map_lookup_elem(&offcpu_hists, &hk);
	if (!h) {
		/* EEXIST: another CPU made it first; use theirs. */
		bpf_map_update_elem(&offcpu_hists, &hk, &fresh, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&offcpu_hists, &hk);
	}
	if (!h) {
		count_stat(OFFCPU_HIST_FULL);
		return;
	}
	if (slot < OFFCPU_HIST_SLOTS)
		__sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline void add_block(const struct offcpu_start *s,
				      __u64 delta)
{
	struct offcpu_key key = { .pid = s->pid, .svc = s->svc,
				  .kstack = s->kstack, .ustack = s->ustack };
	struct offcpu_val *v, first = { .total_ns = delta, .count = 1 };

	v = bpf_map_lookup_elem(&offcpu_aggs, &key);
	if (v) {
		__sync_fetch_and_add(&v->total_ns, delta);
		__sync_fetch_and_add(&v->count, 1);
	} else if (bpf_map_update_elem(&offcpu_aggs, &key, &first,
				       BPF_NOEXIST)) {
		/* EEXIST: another CPU made it; add there. */
		v = bpf_map_lookup_elem(&offcpu_aggs, &key);
		if (!v) {
			count_stat(OFFCPU_KEY_FULL);
			return;
		}
		__sync_fetch_and_add(&v->total_ns, delta);
		__sync_fetch_and_add(&v->count, 1);
	}
	count_stat(OFFCPU_BLOCKS);
	add_hist(s, delta);
}

static __always_inline void block_ends(__u32 tid)
{
	struct offcpu_start *sp, s;
	__u64 delta;

	if (!tid)
		return;
	sp = bpf_map_lookup_elem(&offcpu_starts, &tid);
	if (!sp)
		return;
	s = *sp;
	bpf_map_delete_elem(&offcpu_starts, &tid);
	delta = bpf_ktime_get_ns() - s.ts;
	if (delta < min_block_ns)
		return;
	add_block(&s, delta);
}

/* --- hooks --- */

/* Whether prev's switch-out starts a block: it went to sleep (not
 * preempted), or with state `all` anything but dying. */
static __always_inline bool starts_block(bool preempt, __u32 state,
					 __u32 dying)
{
	if (state & dying)
		return false; /* it never comes back */
	if (state_filter == OFFCPU_STATE_ALL)
		return true;
	return !preempt &&
	       (state & (TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE));
}

static __always_inline int handle_switch(void *ctx, bool preempt,
					 struct task_struct *prev,
					 struct task_struct *next)
{
	if (starts_block(preempt, task_state(prev), TASK_DEAD))
		block_starts(ctx);
	block_ends(BPF_CORE_READ(next, pid));
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, raw_tp, tracepoint. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(ctx, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(ctx, preempt, prev, next);
}

/* prev_state already says "preempted" (TASK_REPORT_MAX, above the sleep
 * bits) and, for a dying task, its exit state. */
SEC("tracepoint/sched/sched_switch")
int offcpu_switch_tp(struct trace_event_raw_sched_switch *ctx)
{
	if (starts_block(false, ctx->prev_state,
			 REPORT_EXIT_DEAD | REPORT_EXIT_ZOMBIE))
		block_starts(ctx);
	block_ends(ctx->next_pid);
	return 0;
}
