// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Syscall counters: counted per (process, syscall) in a per-CPU hash, in the
 * kernel; user space reads the cumulative counts each interval. */
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

KMON_STATS_MAP(syscall_stats, SYSCALL_NR_STATS);

static __always_inline int handle_sys_enter(long nr)
{
	struct syscall_key key = {};
	static const __u64 zero;
	__u64 *v;
	__u32 svc;

	if (nr < 0 || nr >= SYSCALL_NR_MAX)
		return 0;
	if (filter_on && !wanted[nr])
		return 0;
	key.pid = bpf_get_current_pid_tgid() >> 32;
	if (!kmon_selected_tgid(key.pid, &svc))
		return 0;
	key.nr = nr;
	key.svc = svc;
	v = lookup_or_try_init(&syscall_counts, &key, &zero);
	if (!v) {
		stat_inc(&syscall_stats, SYSCALL_MAP_FULL);
		return 0;
	}
	/* Per-CPU slot: the atomic only guards against preemption by another
	 * thread of the same process on this CPU. */
	__sync_fetch_and_add(v, 1);
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, then the tracepoint. */
SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_btf, struct pt_regs *regs, long id)
{
	return handle_sys_enter(id);
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	return handle_sys_enter(ctx->id);
}
