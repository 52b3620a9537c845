// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU time from sched_switch. A selected thread switching out notes
 * when and where it blocked (per tid); switching back in, its time off-CPU
 * is added to the aggregate of its (process, service, kernel stack, user
 * stack) and to its process's histogram. The hot path is every context
 * switch on the machine: an unselected thread costs one state read and one
 * pid_service lookup going out, one start-map lookup coming in. Kernel
 * stacks are walked only for blocks that count (see offcpu.h). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "filter.bpf.h"
#include "histogram.h"
#include "kstack.bpf.h"
#include "maps.bpf.h"
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
/* Bumped by user space as it begins to delete stacks (odd while it
 * does) and when it is done (even): user stack ids remembered in tasks
 * from before may be gone, unless pinned (offcpu_ustack_pins). */
__u32 stack_gen;

/* Where a block's start is noted: in the task itself when the hook has
 * trusted task pointers (tp_btf), far cheaper than a hash update and
 * delete per switch; else by tid (ts 0: none). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} offcpu_task_starts SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, OFFCPU_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, OFFCPU_STACK_DEPTH * sizeof(__u64));
} offcpu_ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, OFFCPU_USTACK_SPARE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, OFFCPU_STACK_DEPTH * sizeof(__u64));
} offcpu_ustacks_spare SEC(".maps");

KSTACK_MAPS(offcpu_kstacks, offcpu_scratch, OFFCPU_STACK_ENTRIES);

/* How many blocks noted in task storage hold each user stack id: a
 * sweep keeps those, since user space cannot list task storage, so a
 * thread asleep across a sweep keeps its user stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OFFCPU_USTACK_IDS);
	__type(key, __u32);
	__type(value, __u64); /* clang 14 fetches 32-bit adds only with v3 */
} offcpu_ustack_pins SEC(".maps");

KMON_STATS_MAP(offcpu_stats, OFFCPU_NR_STATS);

static __always_inline __s32 ustack_id(void *ctx)
{
	long id = bpf_get_stackid(ctx, &offcpu_ustacks, BPF_F_USER_STACK);

	if (id == -EEXIST) { /* its slot held by another: the spare map */
		id = bpf_get_stackid(ctx, &offcpu_ustacks_spare,
				     BPF_F_USER_STACK);
		if (id >= 0)
			id += OFFCPU_STACK_ENTRIES;
	}
	/* -EFAULT (a kernel thread has no user stack) is no loss. */
	if (id == -ENOMEM || id == -EEXIST)
		stat_inc(&offcpu_stats, OFFCPU_STACK_LOST);
	return id;
}

/* The kernel stack of the current task (task NULL) or of a task that is
 * not running: its key in offcpu_kstacks, 0 when none. */
static __always_inline __u64 kstack_of(void *ctx, struct task_struct *task)
{
	bool full;
	__u64 h =
		kstack_take(ctx, task, &offcpu_kstacks, &offcpu_scratch, &full);

	if (full)
		stat_inc(&offcpu_stats, OFFCPU_STACK_LOST);
	return h;
}

/* --- switch-out: the current task is prev --- */

static __always_inline bool same_uregs(const struct offcpu_uregs *a,
				       const struct offcpu_uregs *b)
{
	return a->ip == b->ip && a->sp == b->sp && a->gen == b->gen;
}

/* A fetching add, whose result is used: the arm64 JIT orders only that
 * kind (a plain one is a STADD), and the pin must be visible before
 * stack_gen is read again (ustack_pinned). */
static __always_inline void pin_add(__s32 id, __u64 add)
{
	__u32 key = id;
	__u64 *pins = bpf_map_lookup_elem(&offcpu_ustack_pins, &key), old;

	if (!pins)
		return;
	old = __sync_fetch_and_add(pins, add);
	barrier_var(old);
}

/* The user stack of current (task), walked again only when it entered
 * the kernel from somewhere else than last time (see offcpu_uregs). */
static __always_inline __s32 ustack_cached(void *ctx, struct task_struct *task,
					   struct offcpu_start *last, __u32 gen)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct offcpu_uregs u = { .gen = gen };

	/* A BTF pointer: plain loads, no probe reads. */
	u.ip = PT_REGS_IP(regs);
	u.sp = PT_REGS_SP(regs);
	if (last->ustack >= 0 && same_uregs(&u, &last->uregs))
		return last->ustack;
	last->uregs = u;
	return ustack_id(ctx);
}

/* ustack_cached, pinned until the block ends (take_start). A sweep under
 * way (stack_gen odd), or one begun before the pin was seen (stack_gen
 * moved meanwhile: user space reads the pins after its first bump), may
 * delete the id: then no user stack for this block, rather than one
 * that may be gone or name another stack. */
static __always_inline __s32 ustack_pinned(void *ctx, struct task_struct *task,
					   struct offcpu_start *last)
{
	__u32 gen = *(volatile __u32 *)&stack_gen;
	__s32 id;

	if (gen & 1)
		goto swept;
	id = ustack_cached(ctx, task, last, gen);
	if (id < 0)
		return id;
	pin_add(id, 1);
	if (*(volatile __u32 *)&stack_gen == gen)
		return id;
	pin_add(id, -1);
swept:
	/* counted apart from OFFCPU_STACK_LOST, which starts a sweep */
	stat_inc(&offcpu_stats, OFFCPU_STACK_SWEPT);
	return -1;
}

/* A start in task storage never taken (its switch-in unseen) lets go of
 * its pin, or the id would never be freed. */
static __always_inline void drop_untaken(struct offcpu_start *sp)
{
	if (!sp->ts)
		return;
	sp->ts = 0;
	if (sp->ustack >= 0)
		pin_add(sp->ustack, -1);
}

/* Hooks without task pointers: the start by tid, both stacks now. */
static __always_inline void start_by_tid(void *ctx, __u32 tid,
					 struct offcpu_start *s)
{
	s->kstack = kstack_of(ctx, NULL);
	s->ustack = ustack_id(ctx);
	s->ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_starts, &tid, s, BPF_ANY))
		stat_inc(&offcpu_stats, OFFCPU_START_FULL);
}

/* tp_btf: the start in the task itself; the kernel stack is taken at
 * switch-in, for blocks that count. */
static __always_inline void start_in_task(void *ctx, struct task_struct *prev,
					  const struct offcpu_start *s)
{
	struct offcpu_start *sp;

	sp = bpf_task_storage_get(&offcpu_task_starts, prev, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sp) {
		stat_inc(&offcpu_stats, OFFCPU_START_FULL);
		return;
	}
	/* A new task's storage is zeroed: ustack 0 would look walked. */
	if (!sp->pid)
		sp->ustack = -1;
	else
		drop_untaken(sp);
	sp->ustack = ustack_pinned(ctx, prev, sp);
	sp->kstack = 0;
	sp->pid = s->pid;
	sp->svc = s->svc;
	sp->ts = bpf_ktime_get_ns();
}

/* prev: the task switching out (current), when the hook has a trusted
 * pointer to it. */
static __always_inline void block_starts(void *ctx, struct task_struct *prev)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct offcpu_start s = {};
	__u32 tid = (__u32)id;

	if (!tid) /* the idle task */
		return;
	s.pid = id >> 32;
	if (!kmon_selected_tgid(s.pid, &s.svc))
		return;
	if (prev)
		start_in_task(ctx, prev, &s);
	else
		start_by_tid(ctx, tid, &s);
}

/* --- switch-in of next --- */

static __always_inline void add_hist(const struct offcpu_start *s, __u64 delta)
{
	static const struct offcpu_hist fresh;
	struct offcpu_hist_key hk = { .pid = s->pid, .svc = s->svc };
	struct offcpu_hist *h;
	__u32 slot = delta ? hist_log2(delta) : 0;

	h = lookup_or_try_init(&offcpu_hists, &hk, &fresh);
	if (!h) {
		stat_inc(&offcpu_stats, OFFCPU_HIST_FULL);
		return;
	}
	if (slot < OFFCPU_HIST_SLOTS)
		__sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline void add_block(const struct offcpu_start *s, __u64 delta)
{
	struct offcpu_key key = { .pid = s->pid,
				  .svc = s->svc,
				  .kstack = s->kstack,
				  .ustack = s->ustack };
	static const struct offcpu_val zero;
	struct offcpu_val *v;

	v = lookup_or_try_init(&offcpu_aggs, &key, &zero);
	if (!v) {
		stat_inc(&offcpu_stats, OFFCPU_KEY_FULL);
		return;
	}
	__sync_fetch_and_add(&v->total_ns, delta);
	__sync_fetch_and_add(&v->count, 1);
	stat_inc(&offcpu_stats, OFFCPU_BLOCKS);
	add_hist(s, delta);
}

/* next: the task switching in, when the hook has it (its kernel stack is
 * still the one it blocked in). */
static __always_inline bool take_start(__u32 tid, struct task_struct *next,
				       struct offcpu_start *s)
{
	struct offcpu_start *sp;

	if (next) {
		sp = bpf_task_storage_get(&offcpu_task_starts, next, 0, 0);
		if (!sp || !sp->ts)
			return false;
		*s = *sp;
		sp->ts = 0;
		return true;
	}
	sp = bpf_map_lookup_elem(&offcpu_starts, &tid);
	if (!sp)
		return false;
	*s = *sp;
	return true;
}

/* Lets go of a taken start's stacks: only after its key holds them, so
 * that a sweep, which reads the pins and the starts before the keys,
 * finds them in one or the other. */
static __always_inline void release_start(__u32 tid, struct task_struct *next,
					  const struct offcpu_start *s)
{
	if (!next)
		bpf_map_delete_elem(&offcpu_starts, &tid);
	else if (s->ustack >= 0)
		pin_add(s->ustack, -1);
}

/* A dying task's last switch-out: the start it may still hold. */
static __always_inline void forget_start(struct task_struct *prev)
{
	struct offcpu_start *sp;

	sp = bpf_task_storage_get(&offcpu_task_starts, prev, 0, 0);
	if (sp)
		drop_untaken(sp);
}

static __always_inline void block_ends(void *ctx, __u32 tid,
				       struct task_struct *next)
{
	struct offcpu_start s;
	__u64 delta;

	if (!tid || !take_start(tid, next, &s))
		return;
	delta = bpf_ktime_get_ns() - s.ts;
	if (delta >= min_block_ns) {
		if (!s.kstack && next)
			s.kstack = kstack_of(ctx, next);
		add_block(&s, delta);
	}
	release_start(tid, next, &s);
}

/* --- hooks --- */

/* Whether prev's switch-out starts a block: it went to sleep (not
 * preempted), or with state `all` anything but dying. */
static __always_inline bool starts_block(bool preempt, __u32 state, __u32 dying)
{
	if (state & dying)
		return false; /* it never comes back */
	if (state_filter == OFFCPU_STATE_ALL)
		return true;
	return !preempt &&
	       (state & (TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE));
}

/* trusted: prev and next are BTF pointers the task storage and stack
 * helpers accept (tp_btf). */
static __always_inline int handle_switch(void *ctx, bool preempt,
					 struct task_struct *prev,
					 struct task_struct *next, bool trusted)
{
	__u32 state = task_state(prev, trusted);

	if (starts_block(preempt, state, TASK_DEAD))
		block_starts(ctx, trusted ? prev : NULL);
	else if (trusted && (state & TASK_DEAD))
		forget_start(prev);
	block_ends(ctx, trusted ? next->pid : BPF_CORE_READ(next, pid),
		   trusted ? next : NULL);
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, raw_tp, tracepoint. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(ctx, preempt, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return handle_switch(ctx, preempt, prev, next, false);
}

/* prev_state already says "preempted" (TASK_REPORT_MAX, above the sleep
 * bits) and, for a dying task, its exit state. */
SEC("tracepoint/sched/sched_switch")
int offcpu_switch_tp(struct trace_event_raw_sched_switch *ctx)
{
	if (starts_block(false, ctx->prev_state,
			 REPORT_EXIT_DEAD | REPORT_EXIT_ZOMBIE))
		block_starts(ctx, NULL);
	block_ends(ctx, ctx->next_pid, NULL);
	return 0;
}
