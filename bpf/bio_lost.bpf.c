// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds the I/Os whose completion the bio collector never saw: the kernel
 * sometimes completes a request without running the block_rq_complete
 * programs (seen with tp_btf and raw_tp alike, while the tracepoint itself
 * fired: ftrace recorded it; see docs/design/bio.md). Such a request's entry stays
 * in bio_inflight although the request was freed: a program user space
 * runs (BPF_PROG_TEST_RUN) looks at each issued entry's request, deletes
 * the entries of those freed and counts them, for user space to count as
 * lost. Deleting here, right after looking, and only the entry that was
 * looked at: a freed request is soon used again, and its new entry must
 * stay. A run over the map, not a map iterator: some kernels refuse
 * iterators (EPERM), and this needs none. Its own object: a kernel
 * refusing it loses only this count. */
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

/* A freed request is idle and has no hardware queue; one waiting for its
 * (re)dispatch is idle too, but keeps its queue. Sched tag requests live
 * as long as the queue: reading one is safe. */
static __always_inline bool freed(const struct bio_rq_key *key)
{
	struct request *rq = (struct request *)key->rq;

	return BPF_CORE_READ(rq, state) ==
		       bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE) &&
	       !BPF_CORE_READ(rq, mq_hctx);
}

__u64 found; /* entries of freed requests deleted, so far */

static long find_lost(void *map, struct bio_rq_key *key, struct bio_start *s,
		      void *ctx)
{
	struct bio_rq_key k;
	struct bio_start *cur;
	__u64 start_ns;

	/* Keyed by sector (plain tracepoints): no request to look at. */
	if (!key->rq || !s->issue_ns)
		return 0;
	/* The entry the key holds now, as it is now: the one visited may
	 * have been replaced since (a preallocated element is reused at
	 * once), and the request may have been used again. */
	k = *key;
	start_ns = s->start_ns;
	cur = bpf_map_lookup_elem(&bio_inflight, &k);
	if (!cur || cur->start_ns != start_ns || !cur->issue_ns)
		return 0;
	/* Looked at after the entry: a request used again had its queue
	 * before its new entry was made. */
	if (!freed(&k))
		return 0;
	if (!bpf_map_delete_elem(&bio_inflight, &k))
		found++;
	return 0;
}

SEC("raw_tp")
int bio_find_lost(void *ctx)
{
	bpf_for_each_map_elem(&bio_inflight, find_lost, NULL, 0);
	return 0;
}
