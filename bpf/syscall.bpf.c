// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Syscall counters, per (process, syscall), kept in the kernel; user space
 * reads the cumulative counts each interval.
 *
 * A syscall of a process already seen on this CPU costs the CPU's number,
 * two array lookups (all inlined, no helper call; the CPU's number since
 * 6.10) and an add: each CPU has a direct-mapped table of slots, one
 * (process, syscall) each, with its service and count. Only
 * a syscall whose slot holds another (process, syscall), or was filled
 * before pid_service last changed (pid_service_gen), looks the process
 * up in pid_service and moves the slot's count into syscall_counts, the
 * per-CPU hash user space reads with the slots.
 *
 * Programs on a tracepoint run with preemption off, so a slot is changed
 * by one program at a time (a second run on the same CPU would be refused
 * by the kernel's recursion guard anyway); user space reads slots while
 * they change, so a slot is refilled between two increments of seq. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "filter.bpf.h"
#include "maps.bpf.h"
#include "syscall.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Control: when filter_on, only syscalls whose wanted[nr] is set count.
 * User space rewrites these in place (the .bss map) on reload. */
__u32 filter_on;
__u8 wanted[SYSCALL_NR_MAX];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SYSCALL_MAX_KEYS);
	__type(key, struct syscall_key);
	__type(value, __u64);
} syscall_counts SEC(".maps");

/* Every CPU's slots, CPU after CPU: max_entries is set at load to
 * SYSCALL_SLOTS times one more than the highest CPU number. User space
 * reads them where they are (mmap): read through bpf() as a per-CPU
 * array, each slot of each CPU cost a copy, twice, 40% of an idle kmond's
 * CPU on the default config. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SYSCALL_SLOTS);
	__type(key, __u32);
	__type(value, struct syscall_slot);
} syscall_slots SEC(".maps");

KMON_STATS_MAP(syscall_stats, SYSCALL_NR_STATS);

/* Where (pid, nr) lives: the top bits of a multiplicative hash. */
static __always_inline __u32 slot_of(__u32 pid, __u32 nr)
{
	return ((pid ^ nr << 22) * 2654435761u) >> (32 - SYSCALL_SLOT_BITS);
}

/* The count of the slot's (process, syscall) goes to syscall_counts. */
static __always_inline void slot_spill(struct syscall_slot *s)
{
	struct syscall_key key = { .pid = s->pid, .nr = s->nr, .svc = s->svc };
	static const __u64 zero;
	__u64 *v;

	if (!s->count || s->svc == SYSCALL_SVC_NONE)
		return;
	v = lookup_or_try_init(&syscall_counts, &key, &zero);
	if (v)
		*v += s->count;
	else
		stat_add(&syscall_stats, SYSCALL_MAP_FULL, s->count);
}

/* A fetching add, whose result is used: the arm64 JIT orders only that
 * kind (a plain one is a STADD), and user space must see seq odd before
 * the slot's new fields, and even only after them. */
static __always_inline void seq_bump(struct syscall_slot *s)
{
	__u64 old = __sync_fetch_and_add(&s->seq, 1);

	barrier_var(old);
}

/* The slot now counts (pid, nr): the process looked up in pid_service. */
static __always_inline void slot_refill(struct syscall_slot *s, __u32 pid,
					__u32 nr, __u64 gen)
{
	__u32 svc;
	bool counted = kmon_selected_tgid(pid, &svc);

	seq_bump(s); /* odd: user space reads again */
	slot_spill(s);
	s->pid = pid;
	s->nr = nr;
	s->svc = counted ? svc : SYSCALL_SVC_NONE;
	s->gen = gen;
	s->count = counted;
	seq_bump(s);
}

static __always_inline int handle_sys_enter(long nr)
{
	struct syscall_slot *s;
	__u32 pid, idx, zero = 0;
	__u64 *gen;

	if (nr < 0 || nr >= SYSCALL_NR_MAX)
		return 0;
	if (filter_on && !wanted[nr])
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	idx = bpf_get_smp_processor_id() << SYSCALL_SLOT_BITS |
	      slot_of(pid, nr);
	s = bpf_map_lookup_elem(&syscall_slots, &idx);
	gen = bpf_map_lookup_elem(&pid_service_gen, &zero);
	if (!s || !gen) { /* never: the map has a slot per CPU number */
		stat_inc(&syscall_stats, SYSCALL_MAP_FULL);
		return 0;
	}
	if (s->pid == pid && s->nr == nr && s->gen == *gen) {
		if (s->svc != SYSCALL_SVC_NONE)
			s->count++;
		return 0;
	}
	slot_refill(s, pid, nr, *gen);
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, raw_tp, then the
 * tracepoint. raw_tp before the tracepoint: the kernel skips a
 * tracepoint's programs on a CPU where bpf_prog_active is held, which a
 * bpf() map operation of kmond's own holds; on PREEMPT_RT that holder can
 * be preempted there, and every syscall of the task that runs meanwhile
 * goes uncounted (6.1-rt: 1,761 of 2,000,000), with no miss counted
 * before 6.7. A raw_tp program is not behind that flag. */
SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_btf, struct pt_regs *regs, long id)
{
	return handle_sys_enter(id);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_raw, struct pt_regs *regs, long id)
{
	return handle_sys_enter(id);
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	return handle_sys_enter(ctx->id);
}
