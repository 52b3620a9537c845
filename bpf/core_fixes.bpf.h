/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Every shim for kernel-version drift lives here, each naming the change. */
#ifndef KMON_CORE_FIXES_BPF_H
#define KMON_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/* Whether the exiting task is the last of its thread group. Kernel 6.16
 * added a group_dead argument to sched_process_exit, but older kernels
 * do not pass it; signal->live is decremented before the tracepoint on
 * every kernel since 2.6, so read that instead. */
static __always_inline bool task_group_dead(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/* skb_drop_reason values move as reasons are added (SKB_CONSUMED was
 * inserted before NOT_SPECIFIED in 6.3, commit 0f3ba3b1b4a0 "net: skb:
 * add SKB_CONSUMED"): take the value from the running kernel's BTF. */
static __always_inline __u32 skb_drop_reason_not_specified(void)
{
	return bpf_core_enum_value(enum skb_drop_reason,
				   SKB_DROP_REASON_NOT_SPECIFIED);
}

/* Kernel 6.11 (commit c53795d48ee8 "net: add rx_sk to trace_kfree_skb")
 * passes the receiving socket as a fourth kfree_skb argument; before it,
 * only skb->sk (NULL for most received packets) names a socket. The
 * tp_btf program must not read an argument the kernel does not pass.
 * The field is named through a flavor so the programs also build on an
 * older vmlinux.h (vmlinux/arm64 is 6.1's); the layout is 6.11's. */
struct trace_event_raw_kfree_skb___6_11 {
	struct trace_entry ent;
	void *skbaddr;
	void *location;
	void *rx_sk;
} __attribute__((preserve_access_index));

static __always_inline bool kfree_skb_has_rx_sk(void)
{
	return bpf_core_field_exists(struct trace_event_raw_kfree_skb___6_11,
				     rx_sk);
}

static __always_inline struct sock *
kfree_skb_rx_sk_of(struct trace_event_raw_kfree_skb *ctx)
{
	struct trace_event_raw_kfree_skb___6_11 *new = (void *)ctx;

	if (bpf_core_field_exists(new->rx_sk))
		return new->rx_sk;
	return NULL;
}

/* Kernel 6.4 (the iter_iov() series, "iov_iter: rename iov to __iov")
 * renamed iov_iter's iov to __iov. Named through a flavor, as above, so
 * the programs build on 6.1's vmlinux.h too; a kernel without __iov
 * fails this relocation exactly as it did before the flavor. */
struct iov_iter___6_4 {
	u8 iter_type;
	bool nofault;
	bool data_source;
	size_t iov_offset;
	const struct iovec *__iov;
} __attribute__((preserve_access_index));

static __always_inline const struct iovec *
iov_iter_first_iovec(const struct iov_iter *it)
{
	return ((const struct iov_iter___6_4 *)it)->__iov;
}

/* Kernel 6.3 added the sock:sock_{send,recv}_length tracepoints, so
 * 6.1's vmlinux.h lacks their record; its layout, as 6.3 defines it. */
struct trace_event_raw_sock_msg_length___6_3 {
	struct trace_entry ent;
	void *sk;
	__u16 family;
	__u16 protocol;
	int ret;
	int flags;
	char __data[0];
} __attribute__((preserve_access_index));

/* Kernel 5.14 (commit 2f064a59a11f "sched: Change task_struct::state")
 * renamed task_struct's `state` (long) to `__state` (unsigned int). */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

/* trusted: t is a BTF pointer (tp_btf) read directly, a plain load
 * instead of a probe-read helper call. */
static __always_inline __u32 task_state(struct task_struct *t, bool trusted)
{
	struct task_struct___pre_5_14 *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return trusted ? t->__state : BPF_CORE_READ(t, __state);
	return trusted ? old->state : BPF_CORE_READ(old, state);
}

/* Kernel 5.16 ("block: remove the ->rq_disk field in struct request")
 * moved a request's disk to rq->q->disk; older kernels
 * have rq->rq_disk. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline struct gendisk *request_disk(struct request *rq)
{
	struct request___rq_disk *old = (void *)rq;

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	return BPF_CORE_READ(rq, q, disk);
}

/* REQ_OP_* have kept their values since 4.10, but kernel 6.0 (the
 * blk_opf_t series) renamed enum req_opf to enum req_op: take the value from BTF where the new
 * name exists, the long-standing number otherwise. */
#define REQ_OP_VALUE(name, old)                           \
	(bpf_core_enum_value_exists(enum req_op, name) ?  \
		 bpf_core_enum_value(enum req_op, name) : \
		 (old))

#endif
