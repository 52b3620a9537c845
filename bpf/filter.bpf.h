/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Control maps shared by every BPF object: the provider's object owns them,
 * every collector's skeleton reuses their fds before load
 * (bpf_map__reuse_fd), so one user-space write steers all collectors. */
#ifndef KMON_FILTER_BPF_H
#define KMON_FILTER_BPF_H

#include "filter.h"

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
 * syscall collector's slots) is looked up again. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pid_service_gen SEC(".maps");

static __always_inline void kmon_pid_service_changed(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&pid_service_gen, &zero);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

/* Whether the current process is monitored; *svc gets its service id (0
 * when monitored only because every process is). */
static __always_inline bool kmon_selected_tgid(__u32 tgid, __u32 *svc)
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

#endif
