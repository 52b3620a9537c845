// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The drop collector: TCP segments the kernel drops, with the kernel's own
 * drop reason and the kernel stack that dropped them.
 *
 * Each drop counts in the kernel under (reason, drop site, owner, netns);
 * the first `samples` of a key per interval come through the ringbuf and
 * become one record each (count 1, their exact 4-tuple and stack); the
 * rest become one record per key and interval with their count, the last
 * tuple and the last sampled stack ("summary": true). A SYN flood thus costs one
 * map update per packet, not one event nor one stack walk, and the sum of
 * `count` is every drop. */
#include <linux/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/collector.h"
#include "bpf/drop.h"
#include "drop.skel.h"
#include "collectors/drop_owners.h"
#include "collectors/drop_reason.h"
#include "exporters/exporter.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "loader/misses.h"
#include "loader/prealloc.h"
#include "loader/probe.h"
#include "loader/rings.h"
#include "loader/verified.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "provider/provider.h"
#include "lib/record.h"

enum { HOOK_KFREE_SKB, HOOK_SOCK_STATE, HOOK_SEED, NR_HOOKS };

struct drop_collector {
	struct drop_bpf *skel;
	struct kmond *k;
	const struct ksyms *ksyms; /* at the first stack (ksyms__need) */
	bool ksyms_tried;
	struct kstacks *kstacks;
	struct drop_reasons *reasons;
	/* hash of a drop_key -> its `summarized` count already reported */
	struct hashmap *reported;
	/* hash of a drop_key -> its `count` at the last collect */
	struct hashmap *seen;
	size_t nkeys; /* keys in drop_aggs at the last collect */
	size_t stack_entries; /* drop_kstacks's size */
	uint64_t full_at_sweep; /* stacks_full() at the last sweep */
	uint64_t stacks_swept; /* records whose stack a sweep took */
	struct record rec;
	bool owners; /* the socket-owner hook is attached */
};

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
static const struct hook drop_hooks[] = {
	[HOOK_KFREE_SKB] = { "kfree_skb",
	  { { ATTACH_TP_BTF, "drop_kfree_btf", "kfree_skb" },
	    { ATTACH_TRACEPOINT, "drop_kfree_tp", "skb/kfree_skb" } },
	  2 },
	[HOOK_SOCK_STATE] = { "sock_owner",
	  { { ATTACH_TP_BTF, "drop_state_btf", "inet_sock_set_state" },
	    { ATTACH_TRACEPOINT, "drop_state_tp",
	      "sock/inet_sock_set_state" } },
	  2, .optional = true,
	  .feature = "drops are reported without their socket's owner" },
	/* its own object (drop_owners.h), run once at start */
	[HOOK_SEED] = DROP_SEED_HOOK,
};
/* clang-format on */

static int drop_apply(void *state, const struct config *cfg)
{
	struct drop_collector *c = state;

	live_store(c->skel->data->samples, cfg->drop.samples);
	live_store(c->skel->data->window_ns, cfg->interval_ns);
	return 0;
}

/* --- records --- */

static void add_addr(struct record *r, const char *name, int family,
		     const __u8 *addr)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, addr, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	record__str(r, name, buf);
}

static void add_owner(struct drop_collector *c, const struct drop_key *key)
{
	struct proc_name who;

	if (key->pid) {
		provider__name(c->k->provider, key->pid, key->svc, &who);
		provider__record(&c->rec, key->pid, &who);
		return;
	}
	/* No socket, or one whose owner kmond never saw connect or listen:
	 * the drop ran in softirq, where the current task says nothing. */
	record__null(&c->rec, "pid");
	record__null(&c->rec, "comm");
	record__null(&c->rec, "service");
}

static void emit(struct drop_collector *c, uint64_t ts,
		 const struct drop_key *key, const struct drop_tuple *t,
		 uint64_t kstack, uint64_t count, bool summary)
{
	const char *reason = drop_reasons__name(c->reasons, key->reason);
	const char *const *frames;
	char unnamed[32];
	size_t n;

	if (!reason) {
		snprintf(unnamed, sizeof(unnamed), "reason_%u", key->reason);
		reason = unnamed;
	}
	record__begin(&c->rec, "drop", ts, c->k->cfg.node);
	add_owner(c, key);
	record__str(&c->rec, "family", t->family == AF_INET6 ? "ipv6" : "ipv4");
	add_addr(&c->rec, "saddr", t->family, t->saddr);
	record__u64(&c->rec, "sport", t->sport);
	add_addr(&c->rec, "daddr", t->family, t->daddr);
	record__u64(&c->rec, "dport", t->dport);
	record__str(&c->rec, "reason", reason);
	record__u64(&c->rec, "netns", key->netns);
	record__u64(&c->rec, "count", count);
	if (summary)
		record__bool(&c->rec, "summary", true);
	frames = kstacks__frames(
		c->kstacks, ksyms__need(&c->ksyms, &c->ksyms_tried, "drop"),
		bpf_map__fd(c->skel->maps.drop_kstacks), kstack, &n);
	if (kstack && !frames)
		c->stacks_swept++; /* taken just before a sweep */
	record__array_begin(&c->rec, "stack");
	for (size_t i = 0; i < n; i++)
		record__array_str(&c->rec, frames[i]);
	record__array_end(&c->rec);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct drop_collector *c = ctx;
	const struct drop_event *e = data;

	if (len < sizeof(*e))
		return 0;
	emit(c, clock_ns(CLOCK_REALTIME), &e->key, &e->tuple, e->kstack, 1,
	     false);
	return 0;
}

/* --- summaries --- */

static uint64_t key_hash(const struct drop_key *key)
{
	return fnv1a(key, sizeof(*key));
}

static void summarize(struct drop_collector *c, uint64_t ts,
		      const struct drop_key *key, const struct drop_agg *agg)
{
	uint64_t h = key_hash(key), *reported = hashmap__find(c->reported, h);
	uint64_t before = reported ? *reported : 0;

	/* A key deleted and made again starts from zero. */
	if (agg->summarized < before)
		before = 0;
	if (agg->summarized > before)
		emit(c, ts, key, &agg->sample, agg->kstack,
		     agg->summarized - before, true);
	hashmap__set(c->reported, h, agg->summarized);
}

/* Keys whose owner exited drop no more; when the map fills up (keys of
 * many namespaces or drop sites over time), keys idle for a whole interval
 * go too. Either way only after their last summary went out. */
static bool forget(struct drop_collector *c, const struct drop_key *key,
		   const struct drop_agg *agg)
{
	uint64_t h = key_hash(key), *seen = hashmap__find(c->seen, h);
	bool idle = seen && *seen == agg->count;

	hashmap__set(c->seen, h, agg->count);
	if (key->pid) {
		struct proc_name who;

		provider__name(c->k->provider, key->pid, key->svc, &who);
		if (who.gone)
			return true;
	}
	return idle && c->nkeys > DROP_MAX_KEYS / 4 * 3;
}

/* The programs' samples without a stack (the map of stacks full, or the
 * walk failed). */
static uint64_t stacks_full(struct drop_collector *c)
{
	__u32 nostack = DROP_STACK_LOST;

	return map_percpu_sum(bpf_map__fd(c->skel->maps.drop_stats), &nostack);
}

/* Of lost, the samples without a stack (and the rare one whose stack a
 * sweep took): their drops are reported, without it. */
static uint64_t stacks_lost(struct drop_collector *c)
{
	return stacks_full(c) + c->stacks_swept;
}

/* Stacks no record asked for lately leave drop_kstacks once it fills
 * (distinct drop paths over a daemon's life), so that new ones have
 * room: at three quarters, or once the programs found it full. */
static void sweep_stacks(struct drop_collector *c)
{
	uint64_t full = stacks_full(c);

	kstacks__sweep(c->kstacks, bpf_map__fd(c->skel->maps.drop_kstacks),
		       c->stack_entries, full > c->full_at_sweep);
	c->full_at_sweep = full;
}

/* One collect's walk of drop_aggs. */
struct drop_walk {
	struct drop_collector *c;
	uint64_t ts;
};

/* Reports a key's summary; whether the key goes (forget). */
static bool collect_key(void *ctx, const void *key, const void *value)
{
	struct drop_walk *w = ctx;

	summarize(w->c, w->ts, key, value);
	if (!forget(w->c, key, value))
		return false;
	hashmap__delete(w->c->reported, key_hash(key));
	hashmap__delete(w->c->seen, key_hash(key));
	return true;
}

static void drop_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct drop_collector *c = state;
	struct drop_walk w = { c, ts };
	size_t nkeys, ngone;

	(void)k;
	nkeys = map_sweep(bpf_map__fd(c->skel->maps.drop_aggs),
			  sizeof(struct drop_key), sizeof(struct drop_agg),
			  collect_key, &w, &ngone);
	c->nkeys = nkeys - ngone;
	sweep_stacks(c);
}

static void drop_stats(void *state, struct collector_stats *st)
{
	struct drop_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.drop_stats);
	__u32 events = DROP_EVENTS, rb = DROP_RB_LOST, full = DROP_AGG_FULL;

	st->events = map_percpu_sum(fd, &events);
	/* Ringbuf misses are still counted in summaries, but their exact
	 * tuples are lost; a full key map loses the drop itself. */
	st->lost = map_percpu_sum(fd, &rb) + map_percpu_sum(fd, &full) +
		   stacks_lost(c);
	st->missed = misses__count(c->skel->obj);
	st->lost += st->missed;
}

static void drop_stats_record(void *state, struct record *r)
{
	record__u64(r, "stacks_lost", stacks_lost(state));
}

/* --- life cycle --- */

static void drop_stop(void *state)
{
	struct drop_collector *c = state;

	if (!c)
		return;
	drop_bpf__destroy(c->skel);
	ksyms__put(c->ksyms);
	kstacks__free(c->kstacks);
	drop_reasons__free(c->reasons);
	hashmap__free(c->reported);
	hashmap__free(c->seen);
	record__free(&c->rec);
	free(c);
}

/* drop_kstacks's size: KMOND_TEST_DROP_STACKS=N, so that a test can
 * fill it (drop_stack_sweep). */
static size_t test_stack_entries(void)
{
	const char *test = getenv("KMOND_TEST_DROP_STACKS");

	return test && atoi(test) > 0 ? (size_t)atoi(test) : DROP_STACK_ENTRIES;
}

static int drop_open(struct drop_collector *c, struct kmond *k)
{
	int chosen[NR_HOOKS];
	int err;

	c->skel = drop_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open drop: %s", strerror(-err));
		return err;
	}
	err = probe__select("drop", c->skel->obj, &drop_hooks[HOOK_KFREE_SKB],
			    1, &chosen[HOOK_KFREE_SKB]);
	if (err)
		return err;
	c->stack_entries = test_stack_entries();
	bpf_map__set_max_entries(c->skel->maps.drop_kstacks, c->stack_entries);
	/* Not tp_btf: preallocated maps only (prealloc.h). */
	if (chosen[HOOK_KFREE_SKB] != 0) {
		err = prealloc__map(c->skel->maps.drop_kstacks,
				    PREALLOC_BUDGET);
		if (err)
			return err;
	}
	probe__select("drop", c->skel->obj, &drop_hooks[HOOK_SOCK_STATE], 1,
		      &chosen[HOOK_SOCK_STATE]);
	c->owners = chosen[HOOK_SOCK_STATE] >= 0;
	return provider__share_maps(k->provider, c->skel->obj);
}

static int drop_start(struct kmond *k, void **state)
{
	struct drop_collector *c = xcalloc(1, sizeof(*c));
	int err;

	c->k = k;
	c->reported = hashmap__new();
	c->seen = hashmap__new();
	c->kstacks = kstacks__new();
	/* the probes' copy: two at once made kmond's peak RSS */
	c->reasons = drop_reasons__new(probe__kernel_btf());
	if (!c->reasons) {
		err = -errno;
		log_error("drop: cannot read enum skb_drop_reason from the "
			  "kernel's BTF: %s",
			  strerror(-err));
		goto cleanup;
	}
	err = drop_open(c, k);
	if (err)
		goto cleanup;
	err = drop_bpf__load(c->skel);
	if (err) {
		log_debug("failed to load drop: %s", strerror(-err));
		goto cleanup;
	}
	verified__log("drop", c->skel->obj);
	drop_apply(c, &k->cfg);
	err = rings__add(k->rings, bpf_map__fd(c->skel->maps.drop_events),
			 on_event, c);
	if (err)
		goto cleanup;
	err = drop_bpf__attach(c->skel);
	if (err) {
		log_error("failed to attach drop: %s", strerror(-err));
		goto cleanup;
	}
	/* After attach, so no socket falls in between. */
	drop_owners__seed(&drop_hooks[HOOK_SEED],
			  bpf_map__fd(c->skel->maps.sock_owner),
			  bpf_map__fd(c->skel->maps.port_owner), k->provider);
	ksyms__want(); /* loaded once every collector has started */
	*state = c;
	return 0;
cleanup:
	drop_stop(c);
	return err;
}

const struct collector_ops drop_collector = {
	.name = "drop",
	.hooks = drop_hooks,
	.nhooks = NR_HOOKS,
	.cfg_offset = offsetof(struct config, drop),
	.start = drop_start,
	.apply = drop_apply,
	.collect = drop_collect,
	.stats = drop_stats,
	.stats_record = drop_stats_record,
	.stop = drop_stop,
};
