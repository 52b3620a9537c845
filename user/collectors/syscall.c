// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The syscall collector: counts per (process, syscall) kept in the kernel;
 * each interval emits the increase since the last one. */
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/collector.h"
#include "lib/deltas.h"
#include "exporters/exporter.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "loader/misses.h"
#include "loader/verified.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "bpf/syscall.h"
#include "syscall.skel.h"
#include "lib/syscall_names.h"

/* Reads of a slot that keeps changing hands before it is left for the
 * next interval (its count goes into syscall_counts meanwhile). */
#define SLOT_READS 20
/* Slots found changing, read again once the others are read. */
#define SLOTS_LATER 64

struct syscall_collector {
	struct syscall_bpf *skel;
	/* syscall_slots, mapped: SYSCALL_SLOTS per CPU number */
	const struct syscall_slot *slots;
	size_t slots_size;
	/* (pid << 32 | nr) -> count already reported */
	struct hashmap *reported;
	uint64_t events; /* syscalls counted, over every key ever read */
	struct record rec;
};

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
static const struct hook syscall_hooks[] = {
	{ "sys_enter",
	  { { ATTACH_TP_BTF, "sys_enter_btf", "sys_enter" },
	    { ATTACH_RAW_TP, "sys_enter_raw", "sys_enter" },
	    { ATTACH_TRACEPOINT, "sys_enter_tp", "raw_syscalls/sys_enter" } },
	  3 },
};
/* clang-format on */

static int syscall_apply(void *state, const struct config *cfg)
{
	struct syscall_collector *c = state;
	struct syscall_bpf__bss *bss = c->skel->bss;

	/* Clear the switch first so no syscall is judged by a half-written
	 * list. */
	live_store(bss->filter_on, 0);
	memset(bss->wanted, 0, sizeof(bss->wanted));
	for (int i = 0; i < cfg->syscall.nsyscalls; i++)
		if (cfg->syscall.syscalls[i] < SYSCALL_NR_MAX)
			bss->wanted[cfg->syscall.syscalls[i]] = 1;
	live_store(bss->filter_on, cfg->syscall.nsyscalls > 0);
	return 0;
}

static void syscall_stop(void *state)
{
	struct syscall_collector *c = state;

	if (!c)
		return;
	if (c->slots)
		munmap((void *)c->slots, c->slots_size);
	syscall_bpf__destroy(c->skel);
	hashmap__free(c->reported);
	record__free(&c->rec);
	free(c);
}

/* SYSCALL_SLOTS per CPU number (bpf/syscall.bpf.c's syscall_slots). */
static size_t slot_count(void)
{
	return (size_t)map_cpu_id_bound() * SYSCALL_SLOTS;
}

static int map_slots(struct syscall_collector *c)
{
	void *p;

	c->slots_size = slot_count() * sizeof(*c->slots);
	p = mmap(NULL, c->slots_size, PROT_READ, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.syscall_slots), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->slots = p;
	return 0;
}

static int syscall_start(struct kmond *k, void **state)
{
	struct syscall_collector *c = xcalloc(1, sizeof(*c));
	int chosen[1];
	int err;

	c->reported = hashmap__new();
	c->skel = syscall_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open syscall: %s", strerror(-err));
		goto cleanup;
	}
	err = probe__select("syscall", c->skel->obj, syscall_hooks, 1, chosen);
	if (err)
		goto cleanup;
	err = provider__share_maps(k->provider, c->skel->obj);
	if (err)
		goto cleanup;
	err = bpf_map__set_max_entries(c->skel->maps.syscall_slots,
				       slot_count());
	err = err ?: syscall_bpf__load(c->skel);
	if (err) {
		log_debug("failed to load syscall: %s", strerror(-err));
		goto cleanup;
	}
	verified__log("syscall", c->skel->obj);
	err = map_slots(c);
	if (err) {
		log_error("failed to map syscall's slots: %s", strerror(-err));
		goto cleanup;
	}
	syscall_apply(c, &k->cfg);
	err = syscall_bpf__attach(c->skel);
	if (err) {
		log_error("failed to attach syscall: %s", strerror(-err));
		goto cleanup;
	}
	*state = c;
	return 0;
cleanup:
	syscall_stop(c);
	return err;
}

static void emit(struct syscall_collector *c, struct kmond *k, uint64_t ts,
		 const struct syscall_key *key, uint64_t count)
{
	const char *name = syscall_name(key->nr);
	struct proc_name who;
	char unnamed[32];

	if (!name) {
		snprintf(unnamed, sizeof(unnamed), "syscall_%u", key->nr);
		name = unnamed;
	}
	record__begin(&c->rec, "syscall", ts, k->cfg.node);
	provider__name(k->provider, key->pid, key->svc, &who);
	provider__record(&c->rec, key->pid, &who);
	record__str(&c->rec, "syscall", name);
	record__u64(&c->rec, "nr", key->nr);
	record__u64(&c->rec, "count", count);
	record__end(&c->rec);
	exporter__send(k->exporter, &c->rec);
}

/* The user-space twin of a kernel key: 22 bits of pid (PID_MAX_LIMIT),
 * 10 of syscall, 32 of service. */
static uint64_t key_id(const void *k)
{
	const struct syscall_key *key = k;

	return (uint64_t)key->svc << 32 | (uint64_t)key->pid << 10 | key->nr;
}

struct walk_ctx {
	struct syscall_collector *c;
	struct kmond *k;
	uint64_t ts;
};

static void emit_delta(void *ctx, const void *key, uint64_t delta)
{
	struct walk_ctx *w = ctx;

	emit(w->c, w->k, w->ts, key, delta);
}

/* A slot as it was between two reads of an even seq: the program makes
 * seq odd before it changes the rest, and even after (fetching atomic
 * adds, which order its stores on every architecture). False when it was
 * changing at each of SLOT_READS tries. */
static bool read_slot(const struct syscall_slot *live, struct syscall_slot *s)
{
	for (int i = 0; i < SLOT_READS; i++) {
		__u64 seq = __atomic_load_n(&live->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		s->pid = __atomic_load_n(&live->pid, __ATOMIC_RELAXED);
		s->nr = __atomic_load_n(&live->nr, __ATOMIC_RELAXED);
		s->svc = __atomic_load_n(&live->svc, __ATOMIC_RELAXED);
		s->count = __atomic_load_n(&live->count, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&live->seq, __ATOMIC_RELAXED) == seq)
			return true;
	}
	return false;
}

static void add_slot(struct delta_totals *t, const struct syscall_slot *s)
{
	if (s->count && s->svc != SYSCALL_SVC_NONE)
		deltas__add(t,
			    &(struct syscall_key){ s->pid, s->nr, s->svc, 0 },
			    s->count);
}

/* The counts still in the slots, as deltas__walk's cached(). A slot
 * changing hands stays odd for a map update (well under a microsecond):
 * one found so is read again after the others, and only one still
 * changing then holds the walk's deletions (deltas__hold_all). */
static void add_slots(void *ctx, struct delta_totals *t)
{
	struct walk_ctx *w = ctx;
	size_t n = slot_count(), nlater = 0, later[SLOTS_LATER];
	struct syscall_slot s;

	/* The map was read before: a count it already holds, moved out of
	 * a slot, is not seen in the slot too. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (size_t i = 0; i < n; i++) {
		if (read_slot(&w->c->slots[i], &s))
			add_slot(t, &s);
		else if (nlater < SLOTS_LATER)
			later[nlater++] = i;
		else
			deltas__hold_all(t);
	}
	for (size_t i = 0; i < nlater; i++) {
		if (read_slot(&w->c->slots[later[i]], &s))
			add_slot(t, &s);
		else
			deltas__hold_all(t);
	}
}

/* A process that exited counts no more: forget it, so the map never
 * fills with the dead. */
static bool finished(void *ctx, const void *k, bool grew)
{
	const struct syscall_key *key = k;
	struct walk_ctx *w = ctx;
	struct proc_name who;

	(void)grew; /* a live key stays, idle or not */
	provider__name(w->k->provider, key->pid, key->svc, &who);
	return who.gone;
}

static void syscall_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct syscall_collector *c = state;
	struct walk_ctx ctx = { c, k, ts };
	struct delta_walk walk = {
		.map_fd = bpf_map__fd(c->skel->maps.syscall_counts),
		.key_size = sizeof(struct syscall_key),
		.key_id = key_id,
		.emit = emit_delta,
		.finished = finished,
		.cached = add_slots,
		.ctx = &ctx,
	};

	c->events += deltas__walk(c->reported, &walk);
}

static void syscall_stats(void *state, struct collector_stats *st)
{
	struct syscall_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.syscall_stats);
	__u32 full = SYSCALL_MAP_FULL;

	st->events = c->events;
	st->lost = map_percpu_sum(fd, &full);
	st->missed = misses__count(c->skel->obj);
	st->lost += st->missed;
}

const struct collector_ops syscall_collector = {
	.name = "syscall",
	.hooks = syscall_hooks,
	.nhooks = 1,
	.cfg_offset = offsetof(struct config, syscall),
	.start = syscall_start,
	.apply = syscall_apply,
	.collect = syscall_collect,
	.stats = syscall_stats,
	.stop = syscall_stop,
};
