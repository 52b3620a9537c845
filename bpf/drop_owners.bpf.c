// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Seeds the drop collector's socket owners with the TCP sockets that
 * existed before kmond: a task_file iterator walks every open file once at
 * start-up. Its own object, so a kernel refusing iterators costs only the
 * owners of old sockets, never the drop collector. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "drop_owners.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6

static __always_inline int seed(struct task_struct *task, struct file *file)
{
	struct socket *sock;
	struct drop_port_key pk;
	struct sock *sk;
	__u16 family;
	__u32 tgid;
	__u64 skp;

	if (!task || !file)
		return 0;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if ((family != AF_INET && family != AF_INET6) ||
	    BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	skp = (__u64)sk;
	/* A socket shared across fork goes to the lowest pid, usually the
	 * parent that made it; what the kernel side learned stays. */
	bpf_map_update_elem(&sock_owner, &skp, &tgid, BPF_NOEXIST);
	if (BPF_CORE_READ(sk, __sk_common.skc_state) == TCP_LISTEN) {
		port_key(sk, &pk);
		bpf_map_update_elem(&port_owner, &pk, &tgid, BPF_NOEXIST);
	}
	return 0;
}

SEC("iter/task_file")
int drop_seed_owners(struct bpf_iter__task_file *ctx)
{
	return seed(ctx->task, ctx->file);
}
