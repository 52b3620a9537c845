// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The syscall collector: counts per (process, syscall) kept in the kernel;
 * each interval emits the increase since the last one. */
#include <linux/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
#include "provider/provider.h"
#include "lib/record.h"
#include "bpf/syscall.h"
#include "syscall.skel.h"
#include "lib/syscall_names.h"

/* Slots read per batch, twice (each CPU's copy of each). */
#define SLOTS_PER_READ 64
/* Reads of a slot that keeps changing hands before it is left for the
 * next interval (its count goes into syscall_counts meanwhile). */
#define SLOT_READS 20

struct syscall_collector {
	struct syscall_bpf *skel;
	/* (pid << 32 | nr) -> count already reported */
	struct hashmap *reported;
	uint64_t events; /* syscalls counted, over every key ever read */
	struct record rec;
};

static const struct hook syscall_hooks[] = {
	{ "sys_enter",
	  { { ATTACH_TP_BTF, "sys_enter_btf", "sys_enter" },
	    { ATTACH_RAW_TP, "sys_enter_raw", "sys_enter" },
	    { ATTACH_TRACEPOINT, "sys_enter_tp", "raw_syscalls/sys_enter" } },
	  3 },
};

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
	syscall_bpf__destroy(c->skel);
	hashmap__free(c->reported);
	record__free(&c->rec);
	free(c);
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
	err = probe__select(c->skel->obj, syscall_hooks, 1, chosen);
	if (err)
		goto cleanup;
	err = provider__share_maps(k->provider, c->skel->obj);
	if (err)
		goto cleanup;
	err = syscall_bpf__load(c->skel);
	if (err) {
		log_error("failed to load syscall: %s", strerror(-err));
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

/* Read twice with the same even seq: the slot did not change hands in
 * between, nor while the first read copied it (the program makes seq odd
 * before it writes the rest; the kernel copies a slot front to back and
 * x86 does not reorder loads, so a first copy that saw any of the new
 * fields is followed by a second that sees a new seq). */
static bool slot_stable(const struct syscall_slot *a,
			const struct syscall_slot *b)
{
	return a->seq == b->seq && !(a->seq & 1);
}

/* n slots from first, every CPU's copy. A batch of an array starts after
 * the key given. */
static int read_slots(int fd, __u32 first, __u32 n, struct syscall_slot *out)
{
	__u32 keys[n], count = n, prev = first - 1, last;
	int err;

	err = bpf_map_lookup_batch(fd, first ? &prev : NULL, &last, keys, out,
				   &count, NULL);
	if (err == -ENOENT) /* the map's end */
		err = 0;
	return err ?: (count == n ? 0 : -EIO);
}

/* The counts still in the slots, as deltas__walk's cached(): each slot
 * copy read twice; one that changed hands meanwhile is read again. */
static void add_slots(void *ctx, struct delta_totals *t)
{
	struct walk_ctx *w = ctx;
	int fd = bpf_map__fd(w->c->skel->maps.syscall_slots), ncpus = map_ncpus();
	size_t size = SLOTS_PER_READ * ncpus * sizeof(struct syscall_slot);
	struct syscall_slot *a = xmalloc(size), *b = xmalloc(size);
	struct syscall_slot *one = xcalloc(ncpus, sizeof(*one));
	struct syscall_slot *again = xcalloc(ncpus, sizeof(*again));

	for (__u32 first = 0; first < SYSCALL_SLOTS; first += SLOTS_PER_READ) {
		if (read_slots(fd, first, SLOTS_PER_READ, a) ||
		    read_slots(fd, first, SLOTS_PER_READ, b)) {
			deltas__hold_all(t);
			continue;
		}
		for (int i = 0; i < SLOTS_PER_READ * ncpus; i++) {
			const struct syscall_slot *s = &a[i];
			__u32 idx = first + (__u32)(i / ncpus);
			int cpu = i % ncpus, tries = 0;

			while (!slot_stable(s, &b[i]) && tries++ < SLOT_READS) {
				if (bpf_map_lookup_elem(fd, &idx, one) ||
				    bpf_map_lookup_elem(fd, &idx, again))
					break;
				s = &one[cpu];
				b[i] = again[cpu];
			}
			if (!slot_stable(s, &b[i])) {
				deltas__hold_all(t);
				continue;
			}
			if (s->count && s->svc != SYSCALL_SVC_NONE)
				deltas__add(t,
					    &(struct syscall_key){
						    s->pid, s->nr, s->svc, 0 },
					    s->count);
		}
	}
	free(a);
	free(b);
	free(one);
	free(again);
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
