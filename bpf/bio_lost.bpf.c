// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds the I/Os whose completion the bio collector never saw: on a busy
 * machine the kernel sometimes completes a request without running the
 * block_rq_complete programs (seen with tp_btf and raw_tp alike, while the
 * tracepoint itself fired: ftrace recorded it). Such a request's entry
 * stays in bio_inflight although the request was freed: a bpf_map_elem
 * iterator looks at each issued entry's request and writes out the keys of
 * those freed, for user space to count as lost and delete. Its own object:
 * a kernel without iterators only loses this count. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bio.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The collector's map (fd reused): only its layout matters here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIO_MAX_INFLIGHT);
	__type(key, struct bio_rq_key);
	__type(value, struct bio_start);
} bio_inflight SEC(".maps");

SEC("iter/bpf_map_elem")
int bio_find_lost(struct bpf_iter__bpf_map_elem *ctx)
{
	struct bio_rq_key *key = ctx->key;
	struct bio_start *s = ctx->value;
	struct request *rq;

	/* Keyed by sector (plain tracepoints): no request to look at. */
	if (!key || !s || !key->rq || !s->issue_ns)
		return 0;
	rq = (struct request *)key->rq;
	/* A freed request is idle and has no hardware queue; one waiting
	 * for its (re)dispatch is idle too, but keeps its queue. Sched tag
	 * requests live as long as the queue: reading one is safe. */
	if (BPF_CORE_READ(rq, state) ==
		    bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE) &&
	    !BPF_CORE_READ(rq, mq_hctx))
		bpf_seq_write(ctx->meta->seq, key, sizeof(*key));
	return 0;
}
