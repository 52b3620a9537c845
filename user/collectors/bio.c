// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The bio collector: block I/O per (submitting process, disk, op) and
 * interval -- count, bytes, latency (issue -> complete) and queue time
 * (insert -> issue) percentiles -- plus a latency histogram per series
 * for heatmaps, and optionally each I/O slower than a threshold with the
 * submitter's kernel stack.
 *
 * The kernel keeps cumulative per-CPU counters per (key, histogram
 * bucket) (see bio.h); each interval the increases are summed into one
 * series per key here. I/Os that skipped the I/O scheduler (no insert)
 * have no queue time: they are left out of the queue percentiles, and
 * `queued` says how many I/Os the queue figures describe. */
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bio.h"
#include "bio.skel.h"
#include "collectors/bio_lost.h"
#include "collectors/bio_stacks.h"
#include "collectors/collector.h"
#include "lib/clock.h"
#include "lib/deltas.h"
#include "lib/hash.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "loader/misses.h"
#include "loader/rings.h"
#include "loader/verified.h"
#include "provider/disks.h"
#include "exporters/exporter.h"
#include "lib/hashmap.h"
#include "lib/histogram.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "provider/provider.h"
#include "lib/record.h"

/* A request in flight longer than this was lost to kmond (merged away
 * under the (dev, sector) key, or completed while detached): forgotten. */
#define BIO_STALE_NS (120 * 1000000000ULL)

enum {
	HOOK_START,
	HOOK_INSERT,
	HOOK_ISSUE,
	HOOK_COMPLETE,
	HOOK_REQUEUE,
	HOOK_LOST, /* its own object (bio_lost.h) */
	NR_HOOKS
};

#define BIO_HOOK(event, prog)                                  \
	{ { ATTACH_TP_BTF, prog "_btf", event },               \
	  { ATTACH_RAW_TP, prog "_raw", event },               \
	  { ATTACH_TRACEPOINT, prog "_tp", "block/" event } }, \
		3

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
static const struct hook bio_hooks[] = {
	/* 6.5+: the submitter's context. Without it the owner is the task
	 * at insert (else issue), usually the submitter too. */
	[HOOK_START] = { "io_start", BIO_HOOK("block_io_start", "bio_start"),
			 .optional = true,
			 .feature = "an I/O is owned by the task that inserts "
				    "or issues it" },
	/* Without it, no queue times. */
	[HOOK_INSERT] = { "rq_insert",
			  BIO_HOOK("block_rq_insert", "bio_insert"),
			  .optional = true, .feature = "no queue times" },
	[HOOK_ISSUE] = { "rq_issue", BIO_HOOK("block_rq_issue", "bio_issue") },
	[HOOK_COMPLETE] = { "rq_complete",
			    BIO_HOOK("block_rq_complete", "bio_complete") },
	/* Without io_start: a requeued request inserted again by kblockd
	 * stays its submitter's. */
	[HOOK_REQUEUE] = { "rq_requeue",
			   BIO_HOOK("block_rq_requeue", "bio_requeue"),
			   .optional = true,
			   .feature = "a requeued request inserted again by "
				      "kblockd is kblockd's" },
	[HOOK_LOST] = BIO_LOST_HOOK,
};
/* clang-format on */

static const char *const op_names[BIO_NR_OPS] = {
	[BIO_OP_READ] = "read",	  [BIO_OP_WRITE] = "write",
	[BIO_OP_FLUSH] = "flush", [BIO_OP_DISCARD] = "discard",
	[BIO_OP_OTHER] = "other",
};

/* One (process, service, disk, op) in the current interval. */
struct bio_series {
	struct bio_key key; /* what and bucket 0 */
	struct hist latency;
	struct hist queue;
	uint64_t bytes;
};

struct bio_collector {
	struct bio_bpf *skel;
	struct kmond *k;
	struct disks *disks;
	const struct ksyms *ksyms;
	struct bio_stacks *stacks;
	bool prealloc_stacks; /* a hook on them is no tp_btf */
	/* key_id of a kernel counter -> its value already reported */
	struct hashmap *reported;
	/* series_id -> index + 1 in series, this interval */
	struct hashmap *index;
	struct bio_series *series;
	size_t nseries, cap;
	uint64_t events; /* I/Os counted, over every interval */
	uint64_t stale_lost; /* issued requests swept as stale */
	uint64_t last_walk_ns; /* when the last walk of bio_inflight began */
	struct bio_lost *missed; /* completions the kernel skipped */
	uint64_t missed_lost;
	/* bio_counts keys at the last walk (near full, idle keys make room
	 * for new ones), and so far in this one */
	size_t nkeys, walked;
	struct record rec;
	bool stack_warned;
	bool ksyms_tried;
};

static int bio_apply(void *state, const struct config *cfg)
{
	struct bio_collector *c = state;

	/* Off first, so no I/O is judged by half a threshold. */
	live_store(c->skel->bss->slow_on, 0);
	live_store(c->skel->bss->slow_ns, cfg->bio.slow_ns);
	live_store(c->skel->bss->slow_on, cfg->bio.slow);
	return 0;
}

/* --- records --- */

static const char *op_name(uint8_t op)
{
	return op < BIO_NR_OPS ? op_names[op] : "other";
}

/* comm: the kernel's at submission, if known: right even when the
 * provider has not yet heard of the process (or of its exec). */
static void begin(struct bio_collector *c, const char *kind, uint64_t ts,
		  uint32_t pid, uint32_t svc, uint32_t dev, uint8_t op,
		  const char *comm)
{
	struct proc_name who;

	record__begin(&c->rec, kind, ts, c->k->cfg.node);
	provider__name(c->k->provider, pid, svc, &who);
	if (comm && comm[0])
		who.comm = comm;
	provider__record(&c->rec, pid, &who);
	record__str(&c->rec, "disk", disks__name(c->disks, dev));
	record__str(&c->rec, "op", op_name(op));
}

static void send(struct bio_collector *c)
{
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

static void add_percentiles(struct record *r, const char *prefix,
			    const struct hist *h)
{
	char p50[32], p99[32];

	snprintf(p50, sizeof(p50), "%s_p50_ns", prefix);
	snprintf(p99, sizeof(p99), "%s_p99_ns", prefix);
	if (!hist__count(h)) {
		record__null(r, p50);
		record__null(r, p99);
		return;
	}
	record__u64(r, p50, hist__percentile(h, 50));
	record__u64(r, p99, hist__percentile(h, 99));
}

static void emit_series(struct bio_collector *c, uint64_t ts,
			const struct bio_series *s)
{
	const struct bio_key *key = &s->key;

	begin(c, "bio", ts, key->pid, key->svc, key->dev, key->op, NULL);
	record__u64(&c->rec, "count", hist__count(&s->latency));
	record__u64(&c->rec, "bytes", s->bytes);
	add_percentiles(&c->rec, "latency", &s->latency);
	record__u64(&c->rec, "queued", hist__count(&s->queue));
	add_percentiles(&c->rec, "queue", &s->queue);
	record__u64(&c->rec, "interval_ns", c->k->cfg.interval_ns);
	send(c);
	if (!hist__count(&s->latency))
		return;
	/* The same I/Os as kmon-view's heatmap input (docs/consumers.md). */
	begin(c, "bio_hist", ts, key->pid, key->svc, key->dev, key->op, NULL);
	record__array_begin(&c->rec, "buckets");
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		if (!s->latency.buckets[b])
			continue;
		record__array_begin(&c->rec, NULL);
		record__u64(&c->rec, NULL, hist__bucket_low(b));
		record__u64(&c->rec, NULL, s->latency.buckets[b]);
		record__array_end(&c->rec);
	}
	record__array_end(&c->rec);
	send(c);
}

static int on_slow(void *ctx, void *data, size_t len)
{
	struct bio_collector *c = ctx;
	const struct bio_slow_event *e = data;
	char comm[sizeof(e->comm) + 1];
	const char *const *frames;
	size_t n;

	if (len < sizeof(*e))
		return 0;
	ksyms__need(&c->ksyms, &c->ksyms_tried, "bio");
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = '\0';
	begin(c, "bio_slow", clock_ns(CLOCK_REALTIME), e->pid, e->svc, e->dev,
	      e->op, comm);
	record__u64(&c->rec, "bytes", e->bytes);
	record__u64(&c->rec, "sector", e->sector);
	record__u64(&c->rec, "latency_ns", e->latency_ns);
	if (e->queued)
		record__u64(&c->rec, "queue_ns", e->queue_ns);
	else
		record__null(&c->rec, "queue_ns");
	frames = bio_stacks__frames(c->stacks, c->ksyms, e, &n);
	record__array_begin(&c->rec, "stack");
	for (size_t i = 0; i < n; i++)
		record__array_str(&c->rec, frames[i]);
	record__array_end(&c->rec);
	send(c);
	return 0;
}

/* --- the interval's series --- */

static uint64_t key_id(const void *key)
{
	return fnv1a(key, sizeof(struct bio_key));
}

static struct bio_series *series_of(struct bio_collector *c,
				    const struct bio_key *counter)
{
	struct bio_key key = *counter;
	uint64_t id, *slot;
	struct bio_series *s;

	key.what = 0;
	key.bucket = 0;
	id = key_id(&key);
	slot = hashmap__find(c->index, id);
	if (slot)
		return &c->series[*slot - 1];
	if (c->nseries == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->series = xrealloc(c->series, c->cap * sizeof(*c->series));
	}
	s = &c->series[c->nseries++];
	s->key = key;
	hist__reset(&s->latency);
	hist__reset(&s->queue);
	s->bytes = 0;
	hashmap__set(c->index, id, c->nseries);
	return s;
}

/* A bucket's I/Os are added at its midpoint: percentiles then err by at
 * most half a bucket (~3%). */
static uint64_t bucket_mid(uint32_t b)
{
	uint64_t low = hist__bucket_low(b);

	return low + (hist__bucket_high(b) - low) / 2;
}

static void on_delta(void *ctx, const void *k, uint64_t delta)
{
	struct bio_collector *c = ctx;
	const struct bio_key *key = k;
	struct bio_series *s = series_of(c, key);

	switch (key->what) {
	case BIO_LATENCY:
		hist__add(&s->latency, bucket_mid(key->bucket), delta);
		c->events += delta;
		break;
	case BIO_QUEUE:
		hist__add(&s->queue, bucket_mid(key->bucket), delta);
		break;
	case BIO_BYTES:
		s->bytes += delta;
		break;
	}
}

/* A process that exited submits no more: forget its counters, so the
 * map never fills with the dead. Long-lived processes keep a key per
 * bucket they ever hit: once the map is 3/4 full, keys that did not grow
 * this interval go too (their next I/O starts them again from zero). */
static bool finished(void *ctx, const void *k, bool grew)
{
	struct bio_collector *c = ctx;
	const struct bio_key *key = k;
	struct proc_name who;

	c->walked++;
	provider__name(c->k->provider, key->pid, key->svc, &who);
	return who.gone || (!grew && c->nkeys > BIO_MAX_KEYS / 4 * 3);
}

/* Walks the requests in flight, and forgets those kmond will never see
 * complete before they fill the map. Returns whether one was issued
 * before the previous walk began (in flight a whole interval, rare for
 * a working disk's I/O, and what a request looks like whose completion
 * the kernel skipped), or, at the last walk, issued at all. */
static bool walk_inflight(struct bio_collector *c, bool last_walk)
{
	int fd = bpf_map__fd(c->skel->maps.bio_inflight);
	struct bio_rq_key key, next;
	uint64_t now = mono_ns(), prev = c->last_walk_ns;
	struct bio_start s;
	bool overdue = false, more;

	c->last_walk_ns = now;
	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (bpf_map_lookup_elem(fd, &key, &s))
			continue;
		if (s.issue_ns && (s.issue_ns < prev || last_walk))
			overdue = true;
		/* made after now was read: not stale */
		if (s.start_ns >= now || now - s.start_ns <= BIO_STALE_NS)
			continue;
		bpf_map_delete_elem(fd, &key);
		/* Issued and never seen complete: an I/O lost. */
		if (s.issue_ns)
			c->stale_lost++;
	}
	return overdue;
}

static uint64_t stat_sum(struct bio_collector *c, __u32 stat)
{
	return map_percpu_sum(bpf_map__fd(c->skel->maps.bio_stats), &stat);
}

static void bio_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct bio_collector *c = state;
	struct delta_walk walk = {
		.map_fd = bpf_map__fd(c->skel->maps.bio_counts),
		.key_size = sizeof(struct bio_key),
		.key_id = key_id,
		.emit = on_delta,
		.finished = finished,
		.ctx = c,
	};

	c->nseries = 0;
	hashmap__free(c->index);
	c->index = hashmap__new();
	c->walked = 0;
	deltas__walk(c->reported, &walk);
	bio_stacks__collect(c->stacks, stat_sum(c, BIO_STACK_LOST));
	c->nkeys = c->walked;
	for (size_t i = 0; i < c->nseries; i++)
		emit_series(c, ts, &c->series[i]);
	/* The lost walk looks at every request (the iterator it was cost
	 * 20 times the map walk, 300 us on 16384 buckets): only when a
	 * request has been in flight an interval, so a lost completion is
	 * counted within two, or at the last collect. */
	if (walk_inflight(c, k->last_collect))
		c->missed_lost = bio_lost__sweep(c->missed);
}

static void bio_stats(void *state, struct collector_stats *st)
{
	struct bio_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.bio_stats);
	__u32 keys = BIO_KEYS_FULL, inflight = BIO_INFLIGHT_FULL;
	__u32 rb = BIO_RB_LOST;
	uint64_t stackless = stat_sum(c, BIO_STACK_LOST);
	uint64_t swept = bio_stacks__swept(c->stacks);

	st->events = c->events;
	/* A slow I/O's stack lost is counted too (the I/O is not). */
	st->lost = map_percpu_sum(fd, &keys) + map_percpu_sum(fd, &inflight) +
		   map_percpu_sum(fd, &rb) + stackless + swept +
		   stat_sum(c, BIO_COMPLETION_LOST) +
		   stat_sum(c, BIO_ISSUE_LOST) + c->stale_lost + c->missed_lost;
	if ((stackless || swept) && !c->stack_warned) {
		log_warn("bio: slow I/Os without a stack: %llu (stack map "
			 "full), %llu (swept while in flight)",
			 (unsigned long long)stackless,
			 (unsigned long long)swept);
		c->stack_warned = true;
	}
	/* not in lost: a completion skipped leaves its request, which the
	 * sweep or the request's reuse counts lost */
	st->missed = misses__count(c->skel->obj);
}

/* --- life cycle --- */

static void bio_stop(void *state)
{
	struct bio_collector *c = state;

	if (!c)
		return;
	bio_bpf__destroy(c->skel);
	disks__free(c->disks);
	ksyms__put(c->ksyms);
	bio_stacks__free(c->stacks);
	bio_lost__free(c->missed);
	hashmap__free(c->reported);
	hashmap__free(c->index);
	free(c->series);
	record__free(&c->rec);
	free(c);
}

static int bio_open(struct bio_collector *c, struct kmond *k)
{
	int chosen[NR_HOOKS];
	bool by_sector = false;
	int err;

	c->skel = bio_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open bio: %s", strerror(-err));
		return err;
	}
	err = probe__select("bio", c->skel->obj, bio_hooks, HOOK_LOST, chosen);
	if (err)
		return err;
	/* block_io_start follows a request from its start: an insert is
	 * never taken for a first sight, requeued or not. */
	if (chosen[HOOK_START] >= 0 && chosen[HOOK_REQUEUE] >= 0) {
		bpf_program__set_autoload(
			bpf_object__find_program_by_name(
				c->skel->obj,
				bio_hooks[HOOK_REQUEUE]
					.cands[chosen[HOOK_REQUEUE]]
					.prog),
			false);
		chosen[HOOK_REQUEUE] = -1;
	}
	probe__set_unloaded(&bio_hooks[HOOK_REQUEUE],
			    chosen[HOOK_START] >= 0 ?
				    "block_io_start follows requests" :
				    NULL);
	/* Only the plain tracepoints lack the request pointer; one hook on
	 * them makes every hook key by (dev, sector). */
	for (int h = 0; h < HOOK_LOST; h++) {
		if (chosen[h] < 0)
			continue;
		if (bio_hooks[h].cands[chosen[h]].kind == ATTACH_TRACEPOINT)
			by_sector = true;
		/* Not tp_btf: preallocated maps only (prealloc.h). */
		if (bio_hooks[h].cands[chosen[h]].kind != ATTACH_TP_BTF)
			c->prealloc_stacks = true;
	}
	c->skel->rodata->key_by_sector = by_sector;
	c->skel->rodata->have_io_start = chosen[HOOK_START] >= 0;
	return provider__share_maps(k->provider, c->skel->obj);
}

static int bio_start(struct kmond *k, void **state)
{
	struct bio_collector *c = xcalloc(1, sizeof(*c));
	int err;

	c->k = k;
	c->reported = hashmap__new();
	c->index = hashmap__new();
	c->disks = disks__new(NULL);
	err = bio_open(c, k);
	if (err)
		goto cleanup;
	c->stacks = bio_stacks__new(c->skel, c->prealloc_stacks);
	if (!c->stacks) {
		err = -errno;
		goto cleanup;
	}
	err = bio_bpf__load(c->skel);
	if (err) {
		log_debug("failed to load bio: %s", strerror(-err));
		goto cleanup;
	}
	verified__log("bio", c->skel->obj);
	bio_apply(c, &k->cfg);
	/* Keyed by sector there is no request to look at (docs/design/bio.md). */
	if (!c->skel->rodata->key_by_sector)
		c->missed =
			bio_lost__new(&bio_hooks[HOOK_LOST],
				      bpf_map__fd(c->skel->maps.bio_inflight));
	probe__set_unloaded(&bio_hooks[HOOK_LOST],
			    c->skel->rodata->key_by_sector ?
				    "keyed by sector: no request to look at" :
				    NULL);
	err = rings__add(k->rings, bpf_map__fd(c->skel->maps.bio_events),
			 on_slow, c);
	if (err)
		goto cleanup;
	err = bio_bpf__attach(c->skel);
	if (err) {
		log_error("failed to attach bio: %s", strerror(-err));
		goto cleanup;
	}
	*state = c;
	return 0;
cleanup:
	bio_stop(c);
	return err;
}

const struct collector_ops bio_collector = {
	.name = "bio",
	.hooks = bio_hooks,
	.nhooks = NR_HOOKS,
	.cfg_offset = offsetof(struct config, bio),
	.start = bio_start,
	.apply = bio_apply,
	.collect = bio_collect,
	.stats = bio_stats,
	.stop = bio_stop,
};
