// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `load` records (see tcp_load.h): each interval, the increase of every
 * server's accumulators, turned into rates over the interval:
 *	occupancy = requests in progress, averaged over time
 *	busy	  = the fraction of time with at least one in progress
 * so that occupancy = completions / interval x latency_mean (Little's law)
 * over a steady interval. */
#include <linux/types.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "lib/hashmap.h"
#include "collectors/collector.h"
#include "exporters/exporter.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "collectors/loads.h"
#include "bpf/tcp_load.h"

/* What was reported of one server. */
struct load_was {
	uint64_t t; /* monotonic ns of the read */
	uint64_t arrivals, completions, latency_sum;
	uint64_t area, busy; /* at t */
	uint64_t in_progress;
};

struct tcp_loads {
	struct hashmap *was; /* key (svc << 32 | pid) -> struct load_was * */
	uint64_t epoch;
	uint64_t last; /* monotonic ns: when the last report began */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t tcp_load__area(uint64_t area, uint64_t in_progress, uint64_t t)
{
	/* modulo 2^64: the sum of ends minus starts is negative while
	 * requests are open, and in_progress * t makes up for it */
	return area + in_progress * t;
}

uint64_t tcp_load__busy(uint64_t busy, uint64_t in_progress, uint64_t t)
{
	return busy + (in_progress ? t : 0);
}

struct tcp_loads *tcp_loads__new(void)
{
	struct tcp_loads *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->was = hashmap__new();
	l->last = mono_ns();
	return l;
}

void tcp_loads__free(struct tcp_loads *l)
{
	uint64_t key, v;
	size_t pos = 0;

	if (!l)
		return;
	while (hashmap__next(l->was, &pos, &key, &v))
		free((void *)(uintptr_t)v);
	hashmap__free(l->was);
	free(l);
}

int tcp_loads__init(const struct tcp_load_maps *m)
{
	for (__u32 slot = 0; slot < TCP_MAX_LOADS; slot++)
		if (bpf_map_update_elem(m->free, NULL, &slot, BPF_ANY))
			return -errno;
	return 0;
}

/* A copy no writer was changing: writers bracket their changes with
 * begun++ and ended++, so a copy with begun == ended that the next copy
 * repeats holds no half-done change. The slot must still be key's. */
static int read_load(int fd, __u32 slot, const struct tcp_load_key *key,
		     struct tcp_load *out)
{
	struct tcp_load again;

	for (int i = 0; i < 64; i++) {
		if (bpf_map_lookup_elem(fd, &slot, out) ||
		    bpf_map_lookup_elem(fd, &slot, &again))
			return -1;
		if (out->key.svc != key->svc || out->key.pid != key->pid)
			return -1;
		if (out->begun == out->ended && !memcmp(out, &again, sizeof(again)))
			return 0;
	}
	return -1; /* writers all along: read it next interval */
}

/* Frees a forgotten server's slot: out of load_slots, zeroed (its owner
 * too), back in load_free. */
static void free_slot(const struct tcp_load_maps *m,
		      const struct tcp_load_key *key, __u32 slot)
{
	struct tcp_load zero = { 0 };

	bpf_map_delete_elem(m->slots, key);
	bpf_map_update_elem(m->loads, &slot, &zero, BPF_ANY);
	bpf_map_update_elem(m->free, NULL, &slot, BPF_ANY);
}

static struct load_was *was_of(struct tcp_loads *l, uint64_t id)
{
	uint64_t *v = hashmap__find(l->was, id);
	struct load_was *w;

	if (v)
		return (struct load_was *)(uintptr_t)*v;
	w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	/* made by the kernel since the last report began (or it would
	 * have been read then): from zero at that time */
	w->t = l->last;
	hashmap__set(l->was, id, (uintptr_t)w);
	return w;
}

/* A server without a service whose process exited: its slot can go. */
static bool server_gone(struct kmond *k, const struct tcp_load_key *key)
{
	struct proc_name who;

	if (key->svc)
		return false;
	provider__name(k->provider, key->pid, 0, &who);
	return who.gone;
}

static void emit(struct kmond *k, struct record *rec, uint64_t ts,
		 const struct tcp_load_key *key, const struct load_was *w,
		 const struct tcp_load *v, uint64_t t, uint64_t area,
		 uint64_t busy, uint64_t max)
{
	double dt = (double)(t - w->t);
	uint64_t done = v->completions - w->completions;
	struct proc_name who;

	provider__name(k->provider, key->pid, key->svc, &who);
	record__begin(rec, "load", ts, k->cfg.node);
	if (key->svc) {
		record__str(rec, "service", who.service ? who.service : "?");
		snprintf(rec->key, sizeof(rec->key), "%s",
			 who.service ? who.service : "?");
	} else {
		record__process(rec, key->pid, who.comm, NULL);
	}
	record__str(rec, "side", "server");
	record__u64(rec, "interval_ns", t - w->t);
	record__u64(rec, "arrivals", v->arrivals - w->arrivals);
	record__u64(rec, "completions", done);
	record__double(rec, "occupancy", dt > 0 ? (area - w->area) / dt : 0);
	record__double(rec, "busy", dt > 0 ? (busy - w->busy) / dt : 0);
	record__u64(rec, "concurrency_max", max);
	record__u64(rec, "in_progress", v->in_progress);
	if (done)
		record__u64(rec, "latency_mean_ns",
			    (v->latency_sum - w->latency_sum) / done);
	else
		record__null(rec, "latency_mean_ns");
	record__end(rec);
	exporter__send(k->exporter, rec);
}

void tcp_loads__report(struct tcp_loads *l, const struct tcp_load_maps *m,
		       struct kmond *k, struct record *rec, uint64_t ts)
{
	struct tcp_load_key key, next;
	struct gone {
		struct tcp_load_key key;
		__u32 slot;
	} *gone = NULL;
	uint64_t epoch = l->epoch, next_epoch = epoch + 1;
	size_t ngone = 0;
	__u32 zero = 0, slot;
	bool more;

	uint64_t began = mono_ns();

	/* New maxima go to the other slot from now on. */
	bpf_map_update_elem(m->epoch, &zero, &next_epoch, BPF_ANY);
	l->epoch = next_epoch;
	more = bpf_map_get_next_key(m->slots, NULL, &next) == 0;
	while (more) {
		uint64_t id, t, area, busy, max;
		struct load_was *w;
		struct tcp_load v;
		bool idle;

		key = next;
		more = bpf_map_get_next_key(m->slots, &key, &next) == 0;
		if (bpf_map_lookup_elem(m->slots, &key, &slot) ||
		    read_load(m->loads, slot, &key, &v))
			continue;
		t = mono_ns();
		id = (uint64_t)key.svc << 32 | key.pid;
		w = was_of(l, id);
		area = tcp_load__area(v.area, v.in_progress, t);
		busy = tcp_load__busy(v.busy, v.in_progress, t);
		max = TCP_LOAD_MAX_OF(v.max[epoch & 1], epoch);
		/* in progress from the last interval, or now: also the max */
		if (w->in_progress > max)
			max = w->in_progress;
		if (v.in_progress > max)
			max = v.in_progress;
		idle = v.arrivals == w->arrivals && v.completions == w->completions &&
		       !v.in_progress && !w->in_progress;
		if (!idle)
			emit(k, rec, ts, &key, w, &v, t, area, busy, max);
		w->t = t;
		w->arrivals = v.arrivals;
		w->completions = v.completions;
		w->latency_sum = v.latency_sum;
		w->area = area;
		w->busy = busy;
		w->in_progress = v.in_progress;
		/* also when it exited after its last report: its slot would
		 * be lost */
		if (v.in_progress || !server_gone(k, &key))
			continue;
		gone = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!gone)
			abort();
		gone[ngone++] = (struct gone){ key, slot };
	}
	/* servers without a service whose process exited */
	for (size_t i = 0; i < ngone; i++) {
		uint64_t id = (uint64_t)gone[i].key.svc << 32 | gone[i].key.pid;
		uint64_t *v = hashmap__find(l->was, id);

		free_slot(m, &gone[i].key, gone[i].slot);
		if (v)
			free((void *)(uintptr_t)*v);
		hashmap__delete(l->was, id);
	}
	free(gone);
	l->last = began;
}
