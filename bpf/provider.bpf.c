// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The provider's kernel half: owns the control maps and keeps pid_service
 * current as processes fork, exec and exit, so a selected process is
 * monitored from its first instruction and a reused pid never carries a
 * stale service. Every lifecycle event also goes to user space, which keeps
 * the pid -> comm table records are labelled with. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "proc_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* comm -> service id, for comm selectors, evaluated at exec. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KMON_MAX_COMMS);
	__type(key, char[KMON_COMM_LEN]);
	__type(value, __u32);
} comm_service SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROC_EVENTS_BYTES);
} proc_events SEC(".maps");

KMON_STATS_MAP(provider_stats, PROVIDER_NR_STATS);

static __always_inline void emit(__u32 type, __u32 pid, __u32 ppid,
				 __u32 service)
{
	struct kmon_proc_event *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(&provider_stats, PROVIDER_RINGBUF_LOST);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->ppid = ppid;
	e->service = service;
	e->ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* woken for each: a watcher attaches to a process that may live
	 * a few milliseconds (the ring's adaptive wakeup left events
	 * 10-126 ms in the ring) */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

static __always_inline void set_service(__u32 pid, struct kmon_svc *svc)
{
	if (bpf_map_update_elem(&pid_service, &pid, svc, BPF_ANY))
		stat_inc(&provider_stats, PROVIDER_PIDS_FULL);
	kmon_pid_service_changed();
}

static __always_inline void clear_service(__u32 pid)
{
	if (bpf_map_delete_elem(&pid_service, &pid) == 0)
		kmon_pid_service_changed();
}

static __always_inline int handle_fork(struct task_struct *parent,
				       struct task_struct *child)
{
	__u32 pid = BPF_CORE_READ(child, tgid);
	__u32 ppid = BPF_CORE_READ(parent, tgid);
	struct kmon_svc *svc;

	/* A new thread is not a new process: its tgid is already known. */
	if (pid != BPF_CORE_READ(child, pid))
		return 0;
	svc = bpf_map_lookup_elem(&pid_service, &ppid);
	if (svc)
		set_service(pid, svc);
	/* The child is still running its parent's program: same comm. */
	emit(KMON_PROC_FORK, pid, ppid, svc ? svc->id : 0);
	return 0;
}

static __always_inline int handle_exec(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	char comm[KMON_COMM_LEN] = {};
	struct kmon_svc *old;
	__u32 *id;

	bpf_get_current_comm(comm, sizeof(comm));
	id = bpf_map_lookup_elem(&comm_service, comm);
	old = bpf_map_lookup_elem(&pid_service, &pid);
	if (id) {
		struct kmon_svc svc = { .id = *id };

		if (old && (old->flags & KMON_SVC_STICKY))
			svc = *old;
		set_service(pid, &svc);
	} else if (old && !(old->flags & KMON_SVC_STICKY)) {
		/* Selected for the binary it ran until now. */
		clear_service(pid);
	}
	old = bpf_map_lookup_elem(&pid_service, &pid);
	emit(KMON_PROC_EXEC, pid, 0, old ? old->id : 0);
	return 0;
}

static __always_inline int handle_exit(struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	if (!task_group_dead(task))
		return 0;
	clear_service(pid);
	emit(KMON_PROC_EXIT, pid, 0, 0);
	return 0;
}

/* A process moved between cgroups (a container runtime placing it): user
 * space re-reads its cgroups for cgroup and container selectors. */
static __always_inline int handle_cgroup_attach(struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	if (pid != BPF_CORE_READ(task, pid))
		return 0; /* the leader's move stands for the process */
	emit(KMON_PROC_CGROUP, pid, 0, 0);
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, then raw_tp. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf)
{
	return handle_exec();
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw)
{
	return handle_exec();
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *task)
{
	return handle_exit(task);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *task)
{
	return handle_exit(task);
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_btf, struct cgroup *dst, const char *path,
	     struct task_struct *task)
{
	return handle_cgroup_attach(task);
}

SEC("raw_tp/cgroup_attach_task")
int BPF_PROG(cgroup_raw, struct cgroup *dst, const char *path,
	     struct task_struct *task)
{
	return handle_cgroup_attach(task);
}
