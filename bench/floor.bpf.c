// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of the tcp collector's hottest hooks: empty programs on the
 * same BTF tracepoints, so bench/tcp-nginx.sh can tell what the hooks cost
 * from what kmond's programs add. Named like the tcp programs (the
 * script's bpf_cost sums by prefix). Built and loaded by that script
 * (bench/floor_load.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tcp_recv_floor)
{
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(tcp_send_floor)
{
	return 0;
}
