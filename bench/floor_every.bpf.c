// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of every collector at once (bench/tcp-nginx.sh's every
 * mode): floor.bpf.c's hooks of the tcp collector and an empty program on
 * each other hook the default collectors run on: the syscall collector's
 * sys_enter (which sends every syscall of every process through the
 * kernel's slow path), offcpu's sched_switch, drop's kfree_skb, bio's
 * block hooks and the provider's process hooks. What kmond's programs
 * cannot go below, however little they do: the hooks' own price. The
 * counters collector's two tracepoints (perf events, rare here) are left
 * out. */
#include "floor.bpf.c"

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_floor)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_floor)
{
	return 0;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(drop_floor)
{
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(bio_start_floor)
{
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(bio_insert_floor)
{
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(bio_issue_floor)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bio_complete_floor)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(provider_fork_floor)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(provider_exec_floor)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(provider_exit_floor)
{
	return 0;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(provider_cgroup_floor)
{
	return 0;
}
