/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Who owns a TCP socket, for the drop collector: learned in the kernel at
 * connect() and listen() (drop.bpf.c), and seeded at start-up for sockets
 * that predate kmond (drop_owners.bpf.c). Both objects declare these maps;
 * the second reuses the first's. */
#ifndef KMON_DROP_OWNERS_BPF_H
#define KMON_DROP_OWNERS_BPF_H

#include "drop.h"

/* struct sock * -> tgid of the process that connected or listened. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DROP_MAX_OWNERS);
	__type(key, __u64);
	__type(value, __u32);
} sock_owner SEC(".maps");

/* Listening port -> its owner; accepted sockets have no entry of their
 * own and are attributed to the listener's owner. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DROP_MAX_OWNERS);
	__type(key, struct drop_port_key);
	__type(value, __u32);
} port_owner SEC(".maps");

static __always_inline void port_key(const struct sock *sk,
				     struct drop_port_key *pk)
{
	pk->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	pk->port = BPF_CORE_READ(sk, __sk_common.skc_num);
	pk->pad = 0;
}

#endif
