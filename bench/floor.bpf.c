// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of the tcp collector's request path: an empty program on
 * each hook its programs run on per request (the tp_btf ones and the
 * root cgroup's ingress, where protocol identification reads segments),
 * so bench/tcp-nginx.sh can tell what the hooks cost from what kmond's
 * programs add. Named like the collector's programs (the script's
 * bpf_cost sums by prefix). Built and loaded by that script
 * (bench/floor_load.c attaches the cgroup one to the cgroup v2 root). */
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

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tcp_send_entry_floor)
{
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tcp_state_floor)
{
	return 0;
}

SEC("cgroup_skb/ingress")
int proto_ingress_floor(struct __sk_buff *skb)
{
	return 1;
}
