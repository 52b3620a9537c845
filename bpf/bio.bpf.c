// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Block I/O per (submitter, disk, op): count, bytes, latency and queue
 * time histograms, aggregated here; see bio.h.
 *
 * A request's owner is the process that submitted it. block_io_start
 * (6.5+) fires in the submitter's context when the request is made, and
 * only there is a request it sees taken on: insert and issue often run in
 * another task's context (blk-mq dispatches every queued request from
 * whichever task runs the queue, or from kblockd). Where block_io_start is
 * missing, and for the one request it never sees (the flush machinery's
 * own), the task at insert, else at issue, is the owner.
 * Requests are keyed by their struct request *; the plain tracepoints do
 * not pass it, so when any hook runs on them every hook keys by (dev,
 * sector) instead, as bcc's biosnoop does. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bio.h"
#include "core_fixes.bpf.h"
#include "filter.bpf.h"
#include "histogram.h"
#include "kstack.bpf.h"
#include "maps.bpf.h"

/* The op is the low byte of cmd_flags (REQ_OP_BITS has been 8 since 4.10). */
#define REQ_OP_MASK 0xff

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Fixed at load. */
const volatile bool have_io_start; /* block_io_start is attached */
const volatile bool key_by_sector; /* some hook runs on a tracepoint */

/* Control, rewritten by user space on reload. */
__u32 slow_on; /* report I/Os of at least slow_ns (and take stacks) */
__u64 slow_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIO_MAX_INFLIGHT);
	__type(key, struct bio_rq_key);
	__type(value, struct bio_start);
} bio_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, BIO_MAX_KEYS);
	__type(key, struct bio_key);
	__type(value, __u64);
} bio_counts SEC(".maps");

/* Two maps of stacks used in turn, bio_kstacks while stack_gen is even:
 * user space empties the one not in use, then bumps stack_gen to use it
 * (see user/collectors/bio_stacks.c). So a stack is never cleared while
 * starts still write its map, and a stack is read in the map of its
 * start's generation. Kept by hash (kstack.bpf.h): a stack map's slots
 * collide. */
__u32 stack_gen;

KSTACK_MAPS(bio_kstacks, bio_scratch, BIO_STACK_ENTRIES);

KSTACK_MAP(bio_kstacks_odd, BIO_STACK_ENTRIES);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BIO_RINGBUF_BYTES);
} bio_events SEC(".maps");

KMON_STATS_MAP(bio_stats, BIO_NR_STATS);

/* --- what a request is --- */

static __always_inline __u32 rq_dev(struct request *rq)
{
	struct gendisk *disk = request_disk(rq);

	if (!disk)
		return 0;
	return BIO_MKDEV(BPF_CORE_READ(disk, major),
			 BPF_CORE_READ(disk, first_minor));
}

static __always_inline __u8 rq_op(struct request *rq)
{
	__u32 op = BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK;

	if (op == REQ_OP_VALUE(REQ_OP_READ, 0))
		return BIO_OP_READ;
	if (op == REQ_OP_VALUE(REQ_OP_WRITE, 1))
		return BIO_OP_WRITE;
	if (op == REQ_OP_VALUE(REQ_OP_FLUSH, 2))
		return BIO_OP_FLUSH;
	if (op == REQ_OP_VALUE(REQ_OP_DISCARD, 3))
		return BIO_OP_DISCARD;
	return BIO_OP_OTHER;
}

/* The tracepoints' rwbs string: an 'F' first is a preflush flag when
 * another op letter follows ("FW"), the flush op itself otherwise. */
static __always_inline __u8 rwbs_op(char c, char next)
{
	if (c == 'F' &&
	    (next == 'W' || next == 'R' || next == 'D' || next == 'F'))
		c = next;
	switch (c) {
	case 'R':
		return BIO_OP_READ;
	case 'W':
		return BIO_OP_WRITE;
	case 'F':
		return BIO_OP_FLUSH;
	case 'D':
		return BIO_OP_DISCARD;
	}
	return BIO_OP_OTHER;
}

static __always_inline struct bio_rq_key rq_key(struct request *rq)
{
	struct bio_rq_key key = {};

	if (key_by_sector) {
		key.dev = rq_dev(rq);
		key.sector = BPF_CORE_READ(rq, __sector);
	} else {
		key.rq = (__u64)rq;
	}
	return key;
}

static __always_inline struct bio_rq_key sector_key(__u32 dev, __u64 sector)
{
	struct bio_rq_key key = { .sector = sector, .dev = dev };

	return key;
}

/* --- start, insert, issue --- */

/* The request was used before: an issued one whose completion we never
 * saw is an I/O lost (a request merged away was never issued, its bytes
 * went with the one it joined). */
static __always_inline void count_if_lost(const struct bio_start *old)
{
	if (old && old->issue_ns)
		stat_inc(&bio_stats, BIO_COMPLETION_LOST);
}

/* Whether old is a request requeued and now inserted again (by kblockd's
 * requeue work, in a kworker): the same I/O, followed as it was. */
static __always_inline bool inserted_again(struct bio_start *old)
{
	if (!old || !old->requeued)
		return false;
	old->requeued = 0;
	return true;
}

/* Follows the request on behalf of the current task when it is monitored
 * (and forgets what a reused request pointer left behind when not). */
static __always_inline bool own(void *ctx, const struct bio_rq_key *key)
{
	struct bio_start s = {}, *old;
	bool full;

	s.pid = bpf_get_current_pid_tgid() >> 32;
	if (!kmon_selected_tgid(s.pid, &s.svc)) {
		/* A lookup costs what the delete of a missing key does. */
		old = bpf_map_lookup_elem(&bio_inflight, key);
		if (inserted_again(old))
			return true;
		if (old) {
			count_if_lost(old);
			bpf_map_delete_elem(&bio_inflight, key);
		}
		return false;
	}
	s.start_ns = bpf_ktime_get_ns();
	/* A stack walk costs microseconds: only when slow I/Os are wanted. */
	if (slow_on) {
		bpf_get_current_comm(s.comm, sizeof(s.comm));
		s.stack_gen = stack_gen;
		s.kstack = kstack_take(ctx, NULL,
				       s.stack_gen & 1 ?
					       (void *)&bio_kstacks_odd :
					       (void *)&bio_kstacks,
				       &bio_scratch, &full);
		if (!s.kstack)
			stat_inc(&bio_stats, BIO_STACK_LOST);
	}
	if (!bpf_map_update_elem(&bio_inflight, key, &s, BPF_NOEXIST))
		return true;
	old = bpf_map_lookup_elem(&bio_inflight, key);
	if (inserted_again(old))
		return true;
	count_if_lost(old);
	if (bpf_map_update_elem(&bio_inflight, key, &s, BPF_ANY)) {
		stat_inc(&bio_stats, BIO_INFLIGHT_FULL);
		return false;
	}
	return true;
}

/* What insert and issue know of a request besides its key, to tell its
 * op if need be: the request (tp_btf, raw_tp), else the tracepoint's
 * rwbs letters. */
struct rq_ref {
	struct request *rq;
	char rwbs0, rwbs1;
};

/* Whether block_io_start cannot have seen the request: any when it is not
 * attached, else only the flush machinery's own, the one request with op
 * flush (a flush from above is a write with REQ_PREFLUSH). Asked only of
 * a request without an entry. */
static __always_inline bool unseen_by_start(const struct rq_ref *r)
{
	if (!have_io_start)
		return true;
	if (r->rq)
		return rq_op(r->rq) == BIO_OP_FLUSH;
	return rwbs_op(r->rwbs0, r->rwbs1) == BIO_OP_FLUSH;
}

/* The request's entry; without one, a request block_io_start cannot have
 * seen is taken on for the current task. One it saw and left has none
 * because its submitter is not followed: the task that inserts or issues
 * it is often another. fresh: whatever the key holds is not this
 * request. */
static __always_inline struct bio_start *
entry_or_own(void *ctx, const struct bio_rq_key *key, const struct rq_ref *r,
	     bool fresh)
{
	struct bio_start *s = NULL;

	if (!fresh)
		s = bpf_map_lookup_elem(&bio_inflight, key);
	if (!s && unseen_by_start(r) && own(ctx, key))
		s = bpf_map_lookup_elem(&bio_inflight, key);
	return s;
}

static __always_inline int handle_start(void *ctx, struct bio_rq_key key)
{
	own(ctx, &key);
	return 0;
}

static __always_inline int handle_insert(void *ctx, struct bio_rq_key key,
					 struct rq_ref r)
{
	/* Without block_io_start, insert is the first sight of a request:
	 * whatever the key held before is a request that was merged away. */
	struct bio_start *s = entry_or_own(ctx, &key, &r, !have_io_start);

	if (s)
		s->insert_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int handle_issue(void *ctx, struct bio_rq_key key,
					struct rq_ref r)
{
	struct bio_start *s = entry_or_own(ctx, &key, &r, false);

	/* Without block_io_start, a request issued without an insert
	 * (straight from its submitter) is first seen here: an entry issued,
	 * and neither requeued nor inserted since, is the request's previous
	 * use, whose completion was skipped. (Keyed by sector, it may be
	 * another I/O of the same sectors, still in flight.) */
	if (s && !have_io_start && !key_by_sector && s->issue_ns &&
	    !s->requeued && s->insert_ns < s->issue_ns)
		s = entry_or_own(ctx, &key, &r, true);
	if (s) {
		s->issue_ns = bpf_ktime_get_ns();
		/* Requeued to the dispatch list: issued again, not
		 * inserted. */
		s->requeued = 0;
	}
	return 0;
}

/* Back from the driver to be issued again: without block_io_start, its
 * next insert must not take it for a new request (only then is this
 * hook loaded). */
static __always_inline int handle_requeue(struct bio_rq_key key)
{
	struct bio_start *s = bpf_map_lookup_elem(&bio_inflight, &key);

	if (s)
		s->requeued = 1;
	return 0;
}

/* --- completion --- */

static __always_inline void add(struct bio_key *key, __u8 what, __u16 bucket,
				__u64 n)
{
	static const __u64 zero;
	__u64 *v;

	key->what = what;
	key->bucket = bucket;
	v = lookup_or_try_init(&bio_counts, key, &zero);
	if (v)
		/* Per-CPU slot: the atomic only guards against preemption. */
		__sync_fetch_and_add(v, n);
	else
		stat_inc(&bio_stats, BIO_KEYS_FULL);
}

static __always_inline void send_slow(const struct bio_start *s,
				      const struct bio_key *key, __u64 lat,
				      __u64 queue, __u64 sector)
{
	struct bio_slow_event *e;

	e = bpf_ringbuf_reserve(&bio_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(&bio_stats, BIO_RB_LOST);
		return;
	}
	e->latency_ns = lat;
	e->queue_ns = queue;
	e->bytes = s->bytes;
	e->sector = sector;
	e->pid = s->pid;
	e->svc = s->svc;
	e->dev = key->dev;
	e->kstack = s->kstack;
	e->stack_gen = s->stack_gen;
	e->op = key->op;
	e->queued = s->insert_ns != 0;
	e->pad = 0;
	e->pad2 = 0;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* p: the request's entry (key rk); nr_bytes completed now out of
 * remaining: a partial completion only adds its bytes, the last one
 * accounts the request. error: the completion's status. */
static __always_inline int handle_complete(const struct bio_rq_key *rk,
					   struct bio_start *p, __u32 dev,
					   __u8 op, __u64 sector,
					   __u64 nr_bytes, __u64 remaining,
					   int error)
{
	struct bio_key key = { .dev = dev, .op = op };
	__u64 now = bpf_ktime_get_ns(), lat, queue = 0;
	struct bio_start s;

	/* Keyed by sector, an entry not issued is a newer request's on this
	 * one's sectors (which counted this one lost, taking the key): it
	 * stays for its own request. */
	if (key_by_sector && !p->issue_ns)
		return 0;
	p->bytes += nr_bytes;
	if (nr_bytes < remaining)
		return 0;
	s = *p;
	bpf_map_delete_elem(&bio_inflight, rk);
	if (!s.issue_ns) {
		/* Issued unseen (the kernel skipped our program, or kmond
		 * was still attaching its hooks): an I/O lost. Unless it
		 * never reached the driver: a flush with nothing to flush
		 * (no data), a request that failed before. */
		if (s.bytes && !error)
			stat_inc(&bio_stats, BIO_ISSUE_LOST);
		return 0;
	}
	lat = now - s.issue_ns;
	key.pid = s.pid;
	key.svc = s.svc;
	add(&key, BIO_LATENCY, hist_bucket(lat), 1);
	if (s.insert_ns && s.insert_ns <= s.issue_ns) {
		queue = s.issue_ns - s.insert_ns;
		add(&key, BIO_QUEUE, hist_bucket(queue), 1);
	}
	add(&key, BIO_BYTES, 0, s.bytes);
	if (slow_on && lat >= slow_ns)
		send_slow(&s, &key, lat, queue, sector);
	return 0;
}

/* Requests nobody follows (not monitored, or older than kmond) cost one
 * lookup: the request is read only for those that count. */
static __always_inline int complete_rq(struct request *rq, int error,
				       __u32 nr_bytes)
{
	struct bio_rq_key rk = rq_key(rq);
	struct bio_start *p = bpf_map_lookup_elem(&bio_inflight, &rk);

	if (!p)
		return 0;
	/* The tracepoint fires before the request's length is updated. */
	return handle_complete(&rk, p, rq_dev(rq), rq_op(rq),
			       BPF_CORE_READ(rq, __sector), nr_bytes,
			       BPF_CORE_READ(rq, __data_len), error);
}

/* The plain tracepoint: nr_sector is the bytes completed now; whether
 * more remain is not said, so each completion accounts the request. */
static __always_inline int
complete_tp(struct trace_event_raw_block_rq_completion *ctx)
{
	struct bio_rq_key rk = sector_key(ctx->dev, ctx->sector);
	__u64 bytes = (__u64)ctx->nr_sector << 9;
	/* Byte by byte: the verifier takes only fixed offsets into ctx. */
	char c = ctx->rwbs[0], next = ctx->rwbs[1];
	struct bio_start *p = bpf_map_lookup_elem(&bio_inflight, &rk);

	if (!p)
		return 0;
	return handle_complete(&rk, p, ctx->dev, rwbs_op(c, next), ctx->sector,
			       bytes, bytes, ctx->error);
}

/* --- attach candidates, chosen at start-up: tp_btf, raw_tp, tracepoint --- */

#define TP_KEY(ctx) sector_key((ctx)->dev, (ctx)->sector)
#define RQ_REF(rq) ((struct rq_ref){ .rq = (rq) })
/* Byte by byte: the verifier takes only fixed offsets into ctx. */
#define TP_REF(ctx) \
	((struct rq_ref){ .rwbs0 = (ctx)->rwbs[0], .rwbs1 = (ctx)->rwbs[1] })

SEC("tp_btf/block_io_start")
int BPF_PROG(bio_start_btf, struct request *rq)
{
	return handle_start(ctx, rq_key(rq));
}

SEC("raw_tp/block_io_start")
int BPF_PROG(bio_start_raw, struct request *rq)
{
	return handle_start(ctx, rq_key(rq));
}

SEC("tracepoint/block/block_io_start")
int bio_start_tp(struct trace_event_raw_block_rq *ctx)
{
	return handle_start(ctx, TP_KEY(ctx));
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(bio_insert_btf, struct request *rq)
{
	return handle_insert(ctx, rq_key(rq), RQ_REF(rq));
}

SEC("raw_tp/block_rq_insert")
int BPF_PROG(bio_insert_raw, struct request *rq)
{
	return handle_insert(ctx, rq_key(rq), RQ_REF(rq));
}

SEC("tracepoint/block/block_rq_insert")
int bio_insert_tp(struct trace_event_raw_block_rq *ctx)
{
	return handle_insert(ctx, TP_KEY(ctx), TP_REF(ctx));
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(bio_issue_btf, struct request *rq)
{
	return handle_issue(ctx, rq_key(rq), RQ_REF(rq));
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(bio_issue_raw, struct request *rq)
{
	return handle_issue(ctx, rq_key(rq), RQ_REF(rq));
}

SEC("tracepoint/block/block_rq_issue")
int bio_issue_tp(struct trace_event_raw_block_rq *ctx)
{
	return handle_issue(ctx, TP_KEY(ctx), TP_REF(ctx));
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(bio_requeue_btf, struct request *rq)
{
	return handle_requeue(rq_key(rq));
}

SEC("raw_tp/block_rq_requeue")
int BPF_PROG(bio_requeue_raw, struct request *rq)
{
	return handle_requeue(rq_key(rq));
}

SEC("tracepoint/block/block_rq_requeue")
int bio_requeue_tp(struct trace_event_raw_block_rq_requeue *ctx)
{
	return handle_requeue(TP_KEY(ctx));
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bio_complete_btf, struct request *rq, int error,
	     unsigned int nr_bytes)
{
	return complete_rq(rq, error, nr_bytes);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(bio_complete_raw, struct request *rq, int error,
	     unsigned int nr_bytes)
{
	return complete_rq(rq, error, nr_bytes);
}

SEC("tracepoint/block/block_rq_complete")
int bio_complete_tp(struct trace_event_raw_block_rq_completion *ctx)
{
	return complete_tp(ctx);
}
