// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The least any per-process syscall count does beyond the floor
 * (floor_syscall.bpf.c): take the calling process's pid, here only to
 * compare it with one no process has. bench/syscall-overhead.sh runs it
 * beside the empty program and kmond, so what kmond adds over the
 * floor splits into this and kmond's own work (loaded by
 * build/bench/floor_load; named like kmond's program). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 never; /* written by no call: no pid is 2^32 - 1 */

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_pid_floor, struct pt_regs *regs, long id)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == (__u32)-1)
		never = id;
	return 0;
}
