/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Control maps shared by every BPF object: the provider's object owns them,
 * every collector's skeleton reuses their fds before load
 * (bpf_map__reuse_fd), so one user-space write steers all collectors. */
#ifndef KMON_FILTER_BPF_H
#define KMON_FILTER_BPF_H

#include "filter.h"
#include "maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KMON_MAX_PIDS);
	__type(key, __u32); /* tgid */
	__type(value, struct kmon_svc);
} pid_service SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmon_ctl);
} kmon_ctl SEC(".maps");

/* Bumped at every change of pid_service, by the provider's programs and
 * by user space (through an mmap): what is kept per process from it (the
 * syscall collector's slots, kmon_tgid_seen) is looked up again. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pid_service_gen SEC(".maps");

/* A fetching add, whose result is used: arm64's JIT makes only that kind
 * an ordered one (LDADDAL; a plain add is a STADD), and a CPU that sees
 * the new gen must see the change of pid_service made before it. */
static __always_inline void kmon_pid_service_changed(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&pid_service_gen, &zero), old;

	if (!gen)
		return;
	old = __sync_fetch_and_add(gen, 1);
	barrier_var(old);
}

/* Each CPU's last answers of kmon_selected_tgid, direct-mapped by tgid
 * (shared by every object like the maps above): a process seen on this
 * CPU since pid_service last changed is told by two array lookups
 * (inlined on recent kernels) instead of a hash lookup. Most of a busy
 * host's events are of processes nobody monitors (wrk's, in
 * bench/tcp-nginx.sh: two a request), and each paid that lookup.
 * Programs on tracepoints run with preemption off, but another program
 * can still come in between on the same CPU: a softirq's, or any while
 * an fentry program (counters) is preempted. So a writer claims a slot by
 * a compare-and-swap of seq, which is odd while it fills the slot, and a
 * slot that changed while it was read is taken for a miss. */
#define KMON_TGID_SLOT_BITS 6

struct kmon_tgid_seen {
	__u64 seq; /* 64 bits: BPF's compare-and-swap before cpu v3 */
	__u32 tgid;
	__u32 svc;
	__u64 selected;
	__u64 gen; /* pid_service_gen when it was filled */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << KMON_TGID_SLOT_BITS);
	__type(key, __u32);
	__type(value, struct kmon_tgid_seen);
} kmon_tgid_seen SEC(".maps");

/* What pid_service and kmon_ctl say of tgid. */
static __always_inline bool kmon_lookup_tgid(__u32 tgid, __u32 *svc)
{
	struct kmon_svc *s = bpf_map_lookup_elem(&pid_service, &tgid);
	__u32 zero = 0;
	struct kmon_ctl *ctl;

	if (s) {
		*svc = s->id;
		return true;
	}
	*svc = 0;
	ctl = bpf_map_lookup_elem(&kmon_ctl, &zero);
	return ctl && ctl->all_processes;
}

/* Whether tgid is monitored; *svc gets its service id (0 when monitored
 * only because every process is). */
static __always_inline bool kmon_selected_tgid(__u32 tgid, __u32 *svc)
{
	__u32 idx = (tgid * 2654435761u) >> (32 - KMON_TGID_SLOT_BITS);
	struct kmon_tgid_seen *s = bpf_map_lookup_elem(&kmon_tgid_seen, &idx);
	__u32 zero = 0;
	__u64 seq;
	__u64 *genp = bpf_map_lookup_elem(&pid_service_gen, &zero), gen;
	bool selected;

	if (!s || !genp)
		return kmon_lookup_tgid(tgid, svc);
	/* before the lookup: a change after it leaves the slot stale */
	gen = KMON_READ_ONCE(*genp);
	seq = KMON_READ_ONCE(s->seq);
	KMON_COMPILER_BARRIER(); /* the slot's fields after seq */
	if (!(seq & 1) && s->tgid == tgid && s->gen == gen) {
		*svc = s->svc;
		selected = s->selected;
		KMON_COMPILER_BARRIER();
		if (KMON_READ_ONCE(s->seq) == seq)
			return selected;
	}
	selected = kmon_lookup_tgid(tgid, svc);
	seq = KMON_READ_ONCE(s->seq);
	/* odd: this program came in during another's fill */
	if ((seq & 1) ||
	    __sync_val_compare_and_swap(&s->seq, seq, seq + 1) != seq)
		return selected;
	s->tgid = tgid;
	s->svc = *svc;
	s->selected = selected;
	s->gen = gen;
	KMON_COMPILER_BARRIER();
	s->seq = seq + 2;
	return selected;
}

#endif
