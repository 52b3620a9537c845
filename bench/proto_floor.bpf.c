// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of the hooks a new connection runs kmond's tcp collector and
 * protocol identification on: empty programs on the same hooks, so
 * bench/protocol-conn.sh can tell what bpf_stats measures of a program
 * that does nothing (its clock reads, the hook) from what kmond's add.
 * Loaded by bench/floor_load.c, the ingress one on the cgroup v2 root. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("cgroup_skb/ingress")
int floor_ingress(struct __sk_buff *skb)
{
	return 1;
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(floor_sendmsg)
{
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(floor_state)
{
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(floor_recv)
{
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(floor_send)
{
	return 0;
}
