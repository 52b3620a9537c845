// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of the syscall collector's hook: an empty program on the same
 * BTF tracepoint. Any program on sys_enter sends every syscall of every
 * process through the kernel's slow path; bench/syscall-overhead.sh
 * measures that beside kmond's cost (loaded by build/bench/floor_load).
 * Named like kmond's program (the script's bpf_cost sums by prefix). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_floor)
{
	return 0;
}
