// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Counters of user-chosen kernel events, per (process, event), in the
 * kernel. BPF programs are compiled ahead of time, so one generic program
 * per attach type is attached at run time to every configured event, each
 * attachment with its own cookie (the event id). The count goes to the
 * current task: for events that fire in softirq (tcp_retransmit_skb from
 * a timer) that is whichever task was interrupted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "counters.h"
#include "filter.bpf.h"
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, COUNTERS_MAX_KEYS);
	__type(key, struct counters_key);
	__type(value, __u64);
} counter_counts SEC(".maps");

KMON_STATS_MAP(counter_stats, COUNTERS_NR_STATS);

static __always_inline int count_event(__u64 cookie)
{
	struct counters_key key = {};
	static const __u64 zero;
	__u64 *v;
	__u32 svc;

	key.pid = bpf_get_current_pid_tgid() >> 32;
	if (!kmon_selected_tgid(key.pid, &svc))
		return 0;
	key.event = cookie;
	key.svc = svc;
	v = lookup_or_try_init(&counter_counts, &key, &zero);
	if (!v) {
		stat_inc(&counter_stats, COUNTERS_MAP_FULL);
		return 0;
	}
	__sync_fetch_and_add(v, 1);
	stat_inc(&counter_stats, COUNTERS_EVENTS);
	return 0;
}

/* No target in the section names: user space attaches each program to
 * the configured events (bpf_program__attach_*_opts with a cookie). */
SEC("tracepoint")
int counters_tp(void *ctx)
{
	return count_event(bpf_get_attach_cookie(ctx));
}

SEC("kprobe")
int counters_kprobe(struct pt_regs *ctx)
{
	return count_event(bpf_get_attach_cookie(ctx));
}

/* fentry binds its target at load: user space loads one copy of this
 * object per function, retargeted (bpf_program__set_attach_target). */
SEC("fentry/tcp_connect")
int counters_fentry(void *ctx)
{
	return count_event(bpf_get_attach_cookie(ctx));
}
