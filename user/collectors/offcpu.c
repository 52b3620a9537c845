// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The offcpu collector: time selected threads spend blocked, per
 * (process, kernel stack, user stack), from sched_switch.
 *
 * The kernel keeps cumulative totals per key and a power-of-two histogram
 * per process; each interval this emits the increase of each as `offcpu`
 * and `offcpu_hist` records. Kernel frames come from kallsyms, user frames
 * from the process's ELF symbol tables (usyms). Keys of exited processes
 * are deleted after their last record; stacks no key uses any more are
 * deleted from the stack map when enough have piled up. */
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/collector.h"
#include "lib/hash.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "loader/misses.h"
#include "loader/prealloc.h"
#include "loader/verified.h"
#include "exporters/exporter.h"
#include "lib/hashmap.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "bpf/offcpu.h"
#include "offcpu.skel.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "sym/usyms.h"

/* Symbol tables kept for binaries no process uses any more. */
#define OFFCPU_SPARE_BINARIES 64
/* Stack ids freed by deleted keys before the stack map is swept. */
#define OFFCPU_GC_ORPHANS (OFFCPU_STACK_ENTRIES / 16)

struct offcpu_collector {
	struct offcpu_bpf *skel;
	struct kmond *k;
	const struct ksyms *ksyms; /* at the first stack (ksyms__need) */
	bool ksyms_tried;
	struct kstacks *kstacks; /* kernel stacks, symbolized */
	struct usyms *usyms;
	/* key_id() -> total_ns and count already reported */
	struct hashmap *reported_ns, *reported_count;
	/* hist_id() -> u64[OFFCPU_HIST_SLOTS] already reported */
	struct hashmap *reported_hist;
	struct hashmap *gone; /* pids whose caches go after this interval */
	/* stacks a sweep keeps (the keys', the starts', the pinned): user
	 * stack ids, kernel stack hashes */
	bool used[OFFCPU_USTACK_IDS];
	struct hashmap *kused;
	size_t nkeys; /* keys at the last collect */
	size_t orphans; /* keys deleted since the last stack sweep */
	uint64_t stack_lost; /* OFFCPU_STACK_LOST at the last sweep */
	struct record rec;
};

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
static const struct hook offcpu_hooks[] = {
	{ "sched_switch",
	  { { ATTACH_TP_BTF, "offcpu_switch_btf", "sched_switch" },
	    { ATTACH_RAW_TP, "offcpu_switch_raw", "sched_switch" },
	    { ATTACH_TRACEPOINT, "offcpu_switch_tp", "sched/sched_switch" } },
	  3 },
};
/* clang-format on */

static int offcpu_apply(void *state, const struct config *cfg)
{
	struct offcpu_collector *c = state;

	live_store(c->skel->data->min_block_ns, cfg->offcpu.min_block_ns);
	live_store(c->skel->bss->state_filter, cfg->offcpu.state == OFFCPU_ALL ?
						       OFFCPU_STATE_ALL :
						       OFFCPU_STATE_SLEEP);
	return 0;
}

/* --- records --- */

/* Where a key's reported totals are kept. */
static uint64_t key_id(const struct offcpu_key *key)
{
	return fnv1a(key, sizeof(*key));
}

static uint64_t hist_id(const struct offcpu_hist_key *key)
{
	return (uint64_t)key->pid << 32 | key->svc;
}

/* Whether pid exited; its caches go once this interval's records are
 * out. */
static bool process_gone(struct offcpu_collector *c, uint32_t pid, uint32_t svc)
{
	struct proc_name who;

	provider__name(c->k->provider, pid, svc, &who);
	if (who.gone)
		hashmap__set(c->gone, pid, 1);
	return who.gone;
}

static void add_process(struct offcpu_collector *c, uint32_t pid, uint32_t svc)
{
	struct proc_name who;

	provider__name(c->k->provider, pid, svc, &who);
	provider__record(&c->rec, pid, &who);
}

/* The stack map a user stack id is in (offcpu.h), and its key there. */
static int ustack_map(struct offcpu_collector *c, int id, __u32 *key)
{
	if (id < OFFCPU_STACK_ENTRIES) {
		*key = id;
		return bpf_map__fd(c->skel->maps.offcpu_ustacks);
	}
	*key = id - OFFCPU_STACK_ENTRIES;
	return bpf_map__fd(c->skel->maps.offcpu_ustacks_spare);
}

static void add_user_frames(struct offcpu_collector *c, uint32_t pid, int id)
{
	uint64_t ips[OFFCPU_STACK_DEPTH] = { 0 };
	char buf[KSYM_NAME_MAX + 64];
	__u32 key;

	if (id < 0 || id >= OFFCPU_USTACK_IDS ||
	    bpf_map_lookup_elem(ustack_map(c, id, &key), &key, ips))
		return;
	for (size_t i = 0; i < OFFCPU_STACK_DEPTH && ips[i]; i++) {
		usyms__format(c->usyms, pid, ips[i], buf, sizeof(buf));
		record__array_str(&c->rec, buf);
	}
}

/* Kernel frames first, then user frames, each innermost first. */
static void add_stack(struct offcpu_collector *c, const struct offcpu_key *key)
{
	const char *const *frames = NULL;
	size_t n = 0;

	/* Stacks walked at switch-out start in this program: left out. */
	if (key->kstack)
		frames = kstacks__frames(
			c->kstacks,
			ksyms__need(&c->ksyms, &c->ksyms_tried, "offcpu"),
			bpf_map__fd(c->skel->maps.offcpu_kstacks), key->kstack,
			&n);
	record__array_begin(&c->rec, "stack");
	for (size_t i = 0; i < n; i++)
		record__array_str(&c->rec, frames[i]);
	add_user_frames(c, key->pid, key->ustack);
	record__array_end(&c->rec);
}

static void emit(struct offcpu_collector *c, uint64_t ts,
		 const struct offcpu_key *key, uint64_t total_ns,
		 uint64_t count)
{
	record__begin(&c->rec, "offcpu", ts, c->k->cfg.node);
	add_process(c, key->pid, key->svc);
	add_stack(c, key);
	record__u64(&c->rec, "total_ns", total_ns);
	record__u64(&c->rec, "count", count);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

/* --- aggregates --- */

/* Reports key's increase; true when the key can be deleted: its process
 * exited, or it was idle for an interval while the map is filling up. */
static bool report_key(struct offcpu_collector *c, uint64_t ts,
		       const struct offcpu_key *key,
		       const struct offcpu_val *val)
{
	uint64_t id = key_id(key), *ns = hashmap__find(c->reported_ns, id);
	uint64_t *cnt = hashmap__find(c->reported_count, id);
	uint64_t before_ns = ns ? *ns : 0, before = cnt ? *cnt : 0;

	/* The kernel adds a block's time and its count one after the other:
	 * what a read between them sees of one goes out with the other. */
	if (val->count > before) {
		emit(c, ts, key, val->total_ns - before_ns,
		     val->count - before);
		hashmap__set(c->reported_ns, id, val->total_ns);
		hashmap__set(c->reported_count, id, val->count);
	}
	if (process_gone(c, key->pid, key->svc))
		return true;
	return val->count == before && c->nkeys > OFFCPU_MAX_KEYS / 4 * 3;
}

static void mark_used(struct offcpu_collector *c, uint64_t kstack, int ustack)
{
	if (kstack)
		hashmap__set(c->kused, kstack, 1);
	if (ustack >= 0 && ustack < OFFCPU_USTACK_IDS)
		c->used[ustack] = true;
}

/* One collect's walk of a map of keys or of histograms. */
struct offcpu_walk {
	struct offcpu_collector *c;
	uint64_t ts;
};

/* Reports a key; whether it goes (report_key), its reports with it. */
static bool collect_key(void *ctx, const void *key, const void *value)
{
	struct offcpu_walk *w = ctx;

	if (!report_key(w->c, w->ts, key, value))
		return false;
	hashmap__delete(w->c->reported_ns, key_id(key));
	hashmap__delete(w->c->reported_count, key_id(key));
	return true;
}

static void collect_keys(struct offcpu_collector *c, uint64_t ts)
{
	struct offcpu_walk w = { c, ts };
	size_t nkeys, ngone;

	nkeys = map_sweep(bpf_map__fd(c->skel->maps.offcpu_aggs),
			  sizeof(struct offcpu_key), sizeof(struct offcpu_val),
			  collect_key, &w, &ngone);
	c->nkeys = nkeys - ngone;
	c->orphans += ngone;
}

/* --- stacks --- */

/* Marks the stacks the keys hold. */
static void mark_keys(struct offcpu_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.offcpu_aggs);
	struct offcpu_key key, next;
	bool more;

	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		mark_used(c, key.kstack, key.ustack);
	}
}

/* Marks the user stack ids held by blocks noted in task storage, which
 * user space cannot list: the kernel counts them (offcpu_ustack_pins).
 * Unreadable, every id is kept. */
static void mark_pinned(struct offcpu_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.offcpu_ustack_pins);
	__u32 *keys = xcalloc(OFFCPU_USTACK_IDS, sizeof(*keys));
	__u64 *pins = xcalloc(OFFCPU_USTACK_IDS, sizeof(*pins));
	__u32 out, count = OFFCPU_USTACK_IDS;
	int err;

	err = bpf_map_lookup_batch(fd, NULL, &out, keys, pins, &count, NULL);
	if (err && errno != ENOENT)
		count = 0;
	if (count < OFFCPU_USTACK_IDS) {
		log_warn("offcpu: stack pins unreadable (%s): no user stack "
			 "deleted",
			 err ? strerror(errno) : "short read");
		memset(c->used, 1, sizeof(c->used));
	}
	for (__u32 i = 0; i < count; i++)
		if (pins[i] && keys[i] < OFFCPU_USTACK_IDS)
			c->used[keys[i]] = true;
	free(keys);
	free(pins);
}

/* Whether no key and no start holds kernel stack *key: it goes, with
 * its frames. */
static bool kstack_unused(void *ctx, const void *key, const void *value)
{
	struct offcpu_collector *c = ctx;
	uint64_t h = *(const uint64_t *)key;

	(void)value;
	if (hashmap__find(c->kused, h))
		return false;
	kstacks__forget(c->kstacks, h);
	return true;
}

/* Deletes the kernel stacks no key and no start holds. */
static void sweep_kstacks(struct offcpu_collector *c)
{
	map_sweep(bpf_map__fd(c->skel->maps.offcpu_kstacks), sizeof(uint64_t),
		  0, kstack_unused, c, NULL);
}

/* One user stack map's ids, from first in c->used. */
struct ustack_walk {
	struct offcpu_collector *c;
	__u32 first;
};

/* Whether no key and no thread off-CPU holds user stack *key. */
static bool ustack_unused(void *ctx, const void *key, const void *value)
{
	struct ustack_walk *w = ctx;
	__u32 id = w->first + *(const __u32 *)key;

	(void)value;
	return id >= OFFCPU_USTACK_IDS || !w->c->used[id];
}

/* Deletes the user stacks of one stack map (its ids from first) that
 * no key and no thread off-CPU holds. */
static void sweep_ustacks(struct offcpu_collector *c, int fd, __u32 first)
{
	struct ustack_walk w = { c, first };

	map_sweep(fd, sizeof(__u32), 0, ustack_unused, &w, NULL);
}

/* Deletes the stacks no key and no thread off-CPU now holds. A thread
 * that blocks while stack_gen is odd (a sweep under way) has its block
 * counted without user frames, which is why sweeps are rare. */
static void sweep_stacks(struct offcpu_collector *c)
{
	int sfd = bpf_map__fd(c->skel->maps.offcpu_starts);
	struct offcpu_start start;
	__u32 tid, next_tid;
	bool more;

	/* Odd: tasks re-walk their user stacks from now on (the ids they
	 * remember may be deleted below), and a pin made after the pins are
	 * read is not trusted (ustack_pinned): the bump comes before. */
	live_store(c->skel->bss->stack_gen, c->skel->bss->stack_gen + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memset(c->used, 0, sizeof(c->used));
	hashmap__free(c->kused);
	c->kused = hashmap__new();
	mark_pinned(c);
	more = bpf_map_get_next_key(sfd, NULL, &next_tid) == 0;
	while (more) {
		tid = next_tid;
		more = bpf_map_get_next_key(sfd, &tid, &next_tid) == 0;
		if (!bpf_map_lookup_elem(sfd, &tid, &start))
			mark_used(c, start.kstack, start.ustack);
	}
	/* A block that ended meanwhile let go of its start or pin only
	 * after making its key: read after those, the keys hold it. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mark_keys(c);
	sweep_ustacks(c, bpf_map__fd(c->skel->maps.offcpu_ustacks), 0);
	sweep_ustacks(c, bpf_map__fd(c->skel->maps.offcpu_ustacks_spare),
		      OFFCPU_STACK_ENTRIES);
	/* even again: ids walked from now on stay */
	live_store(c->skel->bss->stack_gen, c->skel->bss->stack_gen + 1);
	sweep_kstacks(c);
	log_debug("offcpu: stacks swept (%zu keys deleted since the last "
		  "sweep)",
		  c->orphans);
	c->orphans = 0;
}

static uint64_t stat_of(struct offcpu_collector *c, __u32 stat)
{
	return map_percpu_sum(bpf_map__fd(c->skel->maps.offcpu_stats), &stat);
}

static void maybe_sweep(struct offcpu_collector *c)
{
	uint64_t lost = stat_of(c, OFFCPU_STACK_LOST);

	/* Stacks are also walked for blocks shorter than min_block, which
	 * leave no key: the maps can fill with no key ever deleted. */
	if (c->orphans > OFFCPU_GC_ORPHANS || lost > c->stack_lost)
		sweep_stacks(c);
	c->stack_lost = lost;
}

/* --- histograms --- */

static void emit_hist(struct offcpu_collector *c, uint64_t ts,
		      const struct offcpu_hist_key *key,
		      const struct offcpu_hist *h, uint64_t *before)
{
	record__begin(&c->rec, "offcpu_hist", ts, c->k->cfg.node);
	add_process(c, key->pid, key->svc);
	record__u64(&c->rec, "interval_ns", c->k->cfg.interval_ns);
	record__array_begin(&c->rec, "buckets");
	for (int s = 0; s < OFFCPU_HIST_SLOTS; s++) {
		if (h->slots[s] <= before[s])
			continue;
		/* [low_ns, count]: slot s holds [2^s, 2^(s+1)), 0 holds 0 */
		record__array_begin(&c->rec, NULL);
		record__u64(&c->rec, NULL, s ? 1ULL << s : 0);
		record__u64(&c->rec, NULL, h->slots[s] - before[s]);
		record__array_end(&c->rec);
	}
	record__array_end(&c->rec);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

/* Reports the histogram's increase; true when its process exited. */
static bool report_hist(struct offcpu_collector *c, uint64_t ts,
			const struct offcpu_hist_key *key,
			const struct offcpu_hist *h)
{
	uint64_t id = hist_id(key), *slot = hashmap__find(c->reported_hist, id);
	uint64_t *before = slot ? (uint64_t *)(uintptr_t)*slot : NULL;

	if (!before) {
		before = calloc(OFFCPU_HIST_SLOTS, sizeof(*before));
		if (!before)
			return false;
		hashmap__set(c->reported_hist, id, (uintptr_t)before);
	}
	if (memcmp(h->slots, before, sizeof(h->slots))) {
		emit_hist(c, ts, key, h, before);
		memcpy(before, h->slots, sizeof(h->slots));
	}
	return process_gone(c, key->pid, key->svc);
}

/* Reports a process's histogram; whether it goes (report_hist), its
 * last report with it. */
static bool collect_hist(void *ctx, const void *key, const void *value)
{
	struct offcpu_walk *w = ctx;
	uint64_t *slot;

	if (!report_hist(w->c, w->ts, key, value))
		return false;
	slot = hashmap__find(w->c->reported_hist, hist_id(key));
	if (slot) {
		free((void *)(uintptr_t)*slot);
		hashmap__delete(w->c->reported_hist, hist_id(key));
	}
	return true;
}

static void collect_hists(struct offcpu_collector *c, uint64_t ts)
{
	struct offcpu_walk w = { c, ts };

	map_sweep(bpf_map__fd(c->skel->maps.offcpu_hists),
		  sizeof(struct offcpu_hist_key), sizeof(struct offcpu_hist),
		  collect_hist, &w, NULL);
}

static void offcpu_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct offcpu_collector *c = state;
	uint64_t pid, one;
	size_t pos = 0;

	(void)k;
	collect_keys(c, ts);
	collect_hists(c, ts);
	maybe_sweep(c);
	/* Their last records are out: their mappings can go. */
	while (hashmap__next(c->gone, &pos, &pid, &one))
		usyms__forget(c->usyms, (uint32_t)pid);
	hashmap__free(c->gone);
	c->gone = hashmap__new();
	usyms__tick(c->usyms);
}

/* Of lost, the stacks: their blocks are counted, without that stack (a
 * user stack whose slot in both stack maps others hold, a stack map
 * full, or a user stack not walked while a sweep was under way); the
 * rest of lost are blocks missing. */
static uint64_t stacks_lost(struct offcpu_collector *c)
{
	return stat_of(c, OFFCPU_STACK_LOST) + stat_of(c, OFFCPU_STACK_SWEPT);
}

static void offcpu_stats(void *state, struct collector_stats *st)
{
	struct offcpu_collector *c = state;

	st->events = stat_of(c, OFFCPU_BLOCKS);
	st->lost = stat_of(c, OFFCPU_START_FULL) + stat_of(c, OFFCPU_KEY_FULL) +
		   stat_of(c, OFFCPU_HIST_FULL) + stacks_lost(c);
	st->missed = misses__count(c->skel->obj);
	st->lost += st->missed;
}

static void offcpu_stats_record(void *state, struct record *r)
{
	record__u64(r, "stacks_lost", stacks_lost(state));
	/* of them, those not walked while a sweep was under way: how many
	 * depends on how long a sweep takes, not on the maps */
	record__u64(r, "stacks_swept", stat_of(state, OFFCPU_STACK_SWEPT));
}

/* --- life cycle --- */

static void offcpu_stop(void *state)
{
	struct offcpu_collector *c = state;

	if (!c)
		return;
	offcpu_bpf__destroy(c->skel);
	ksyms__put(c->ksyms);
	kstacks__free(c->kstacks);
	hashmap__free(c->kused);
	usyms__free(c->usyms);
	hashmap__free(c->reported_ns);
	hashmap__free(c->reported_count);
	hashmap__free_values(c->reported_hist, free);
	hashmap__free(c->gone);
	record__free(&c->rec);
	free(c);
}

static int offcpu_load(struct offcpu_collector *c, struct kmond *k)
{
	int chosen[1];
	int err;

	c->skel = offcpu_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open offcpu: %s", strerror(-err));
		return err;
	}
	err = probe__select("offcpu", c->skel->obj, offcpu_hooks, 1, chosen);
	err = err ?: provider__share_maps(k->provider, c->skel->obj);
	if (err)
		return err;
	/* tp_btf keeps starts in the task, the others by tid: only one of
	 * the maps is needed (and kernels without task storage must not be
	 * asked for it). */
	if (chosen[0] != 0) {
		bpf_map__set_autocreate(c->skel->maps.offcpu_task_starts,
					false);
		/* Not tp_btf: preallocated maps only (prealloc.h). */
		err = prealloc__map(c->skel->maps.offcpu_kstacks,
				    PREALLOC_BUDGET);
	} else {
		bpf_map__set_max_entries(c->skel->maps.offcpu_starts, 1);
	}
	err = err ?: offcpu_bpf__load(c->skel);
	if (err)
		log_debug("failed to load offcpu: %s", strerror(-err));
	else
		verified__log("offcpu", c->skel->obj);
	return err;
}

static int offcpu_start(struct kmond *k, void **state)
{
	struct offcpu_collector *c = xcalloc(1, sizeof(*c));
	int err;

	c->k = k;
	c->reported_ns = hashmap__new();
	c->reported_count = hashmap__new();
	c->reported_hist = hashmap__new();
	c->gone = hashmap__new();
	c->kstacks = kstacks__new();
	c->usyms = usyms__new(OFFCPU_SPARE_BINARIES);
	err = offcpu_load(c, k);
	if (err)
		goto cleanup;
	offcpu_apply(c, &k->cfg);
	err = offcpu_bpf__attach(c->skel);
	if (err) {
		log_error("failed to attach offcpu: %s", strerror(-err));
		goto cleanup;
	}
	ksyms__want(); /* loaded once every collector has started */
	*state = c;
	return 0;
cleanup:
	offcpu_stop(c);
	return err;
}

const struct collector_ops offcpu_collector = {
	.name = "offcpu",
	.hooks = offcpu_hooks,
	.nhooks = 1,
	.cfg_offset = offsetof(struct config, offcpu),
	.start = offcpu_start,
	.apply = offcpu_apply,
	.collect = offcpu_collect,
	.stats = offcpu_stats,
	.stats_record = offcpu_stats_record,
	.stop = offcpu_stop,
};
