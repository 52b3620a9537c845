// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `load` records (see tcp_load.h): each interval, the increase of every
 * server's accumulators, and of every endpoint's its callers keep (client
 * side), turned into rates over the interval:
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

#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/hostport.h"
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
	uint32_t idle; /* intervals in a row with nothing (client side) */
};

/* An endpoint nobody called for this many intervals is forgotten, so the
 * endpoints called over time do not fill the map. (A call that begins
 * while its entry goes leaves it below zero in progress, forgotten again
 * at the next quiet.) */
#define CALL_IDLE_INTERVALS 64

/* Servers (tcp_load_key) or, on the client side, endpoints called
 * (tcp_call_key): the maps of one, and what was reported of each. */
struct load_side {
	int map, max;
	size_t key_size; /* the max map's key: this key, then the parity */
	bool client;
	struct hashmap *was; /* id -> struct load_was * */
};

struct tcp_loads {
	struct hashmap *was[2]; /* server, client */
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
	l->was[0] = hashmap__new();
	l->was[1] = hashmap__new();
	l->last = mono_ns();
	return l;
}

void tcp_loads__free(struct tcp_loads *l)
{
	uint64_t key, v;
	size_t pos = 0;

	if (!l)
		return;
	for (int i = 0; i < 2; i++) {
		pos = 0;
		while (hashmap__next(l->was[i], &pos, &key, &v))
			free((void *)(uintptr_t)v);
		hashmap__free(l->was[i]);
	}
	free(l);
}

/* A copy no writer was changing: writers bracket their changes with
 * begun++ and ended++, so a copy with begun == ended that the next copy
 * repeats holds no half-done change. */
static int read_load(int fd, const void *key, struct tcp_load *out)
{
	struct tcp_load again;

	for (int i = 0; i < 64; i++) {
		if (bpf_map_lookup_elem(fd, key, out) ||
		    bpf_map_lookup_elem(fd, key, &again))
			return -1;
		if (out->begun == out->ended && !memcmp(out, &again, sizeof(again)))
			return 0;
	}
	return -1; /* writers all along: read it next interval */
}

/* This interval's largest number in progress (its slot is then cleared
 * for the interval after next). */
static uint64_t read_max(const struct load_side *sd, const void *key,
			 uint64_t epoch)
{
	/* tcp_load_max_key, tcp_call_max_key: the key, then the parity */
	union {
		struct tcp_load_max_key srv;
		struct tcp_call_max_key call;
	} mk;
	__u32 parity = epoch & 1;
	__u64 v = 0;

	memset(&mk, 0, sizeof(mk));
	memcpy(&mk, key, sd->key_size);
	memcpy((char *)&mk + sd->key_size, &parity, sizeof(parity));
	if (bpf_map_lookup_elem(sd->max, &mk, &v))
		return 0;
	bpf_map_delete_elem(sd->max, &mk);
	return v;
}

static struct load_was *was_of(struct tcp_loads *l, struct hashmap *was,
			       uint64_t id)
{
	uint64_t *v = hashmap__find(was, id);
	struct load_was *w;

	if (v)
		return (struct load_was *)(uintptr_t)*v;
	w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	/* made by the kernel since the last report began (or it would
	 * have been read then): from zero at that time */
	w->t = l->last;
	hashmap__set(was, id, (uintptr_t)w);
	return w;
}

/* Who the record is of: a server's service or process, or the endpoint
 * its callers call. *gone: a process without a service that exited. */
static void emit_who(struct kmond *k, struct record *rec,
		     const struct load_side *sd, const void *key, bool *gone)
{
	const struct tcp_load_key *srv = key;
	const struct tcp_call_key *call = key;
	struct proc_name who;
	char ep[64]; /* "[v6]:port" is at most 53 */

	*gone = false;
	if (sd->client) {
		hostport__format(call->family, call->addr, call->port, ep,
				 sizeof(ep));
		record__str(rec, "endpoint", ep);
		snprintf(rec->key, sizeof(rec->key), "%s", ep);
		record__str(rec, "side", "client");
		return;
	}
	provider__name(k->provider, srv->pid, srv->svc, &who);
	*gone = srv->svc == 0 && who.gone;
	if (srv->svc) {
		record__str(rec, "service", who.service ? who.service : "?");
		snprintf(rec->key, sizeof(rec->key), "%s",
			 who.service ? who.service : "?");
	} else {
		record__process(rec, srv->pid, who.comm, NULL);
	}
	record__str(rec, "side", "server");
}

static void emit(struct kmond *k, struct record *rec, uint64_t ts,
		 const struct load_side *sd, const void *key,
		 const struct load_was *w, const struct tcp_load *v, uint64_t t,
		 uint64_t area, uint64_t busy, uint64_t max, bool *gone)
{
	double dt = (double)(t - w->t);
	uint64_t done = v->completions - w->completions;

	record__begin(rec, "load", ts, k->cfg.node);
	emit_who(k, rec, sd, key, gone);
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

/* The entry's id in sd->was. */
static uint64_t id_of(const struct load_side *sd, const void *key)
{
	const struct tcp_load_key *srv = key;

	if (sd->client)
		return fnv1a(key, sd->key_size);
	return (uint64_t)srv->svc << 32 | srv->pid;
}

/* Reports every entry of one side's map; forgets the servers without a
 * service whose process exited and the endpoints long quiet. */
static void report_side(struct tcp_loads *l, const struct load_side *sd,
			struct kmond *k, struct record *rec, uint64_t ts,
			uint64_t epoch)
{
	union {
		struct tcp_load_key srv;
		struct tcp_call_key call;
	} key, next, *gone = NULL;
	size_t ngone = 0;
	bool more;

	memset(&next, 0, sizeof(next));
	more = bpf_map_get_next_key(sd->map, NULL, &next) == 0;
	while (more) {
		uint64_t id, t, area, busy, max;
		struct load_was *w;
		struct tcp_load v;
		bool idle, forget = false;

		key = next;
		more = bpf_map_get_next_key(sd->map, &key, &next) == 0;
		if (read_load(sd->map, &key, &v))
			continue;
		t = mono_ns();
		id = id_of(sd, &key);
		w = was_of(l, sd->was, id);
		area = tcp_load__area(v.area, v.in_progress, t);
		busy = tcp_load__busy(v.busy, v.in_progress, t);
		max = read_max(sd, &key, epoch);
		/* in progress from the last interval, or now: also the max */
		if (w->in_progress > max)
			max = w->in_progress;
		if (v.in_progress > max)
			max = v.in_progress;
		idle = v.arrivals == w->arrivals && v.completions == w->completions &&
		       !v.in_progress && !w->in_progress;
		if (!idle)
			emit(k, rec, ts, sd, &key, w, &v, t, area, busy, max,
			     &forget);
		w->t = t;
		w->arrivals = v.arrivals;
		w->completions = v.completions;
		w->latency_sum = v.latency_sum;
		w->area = area;
		w->busy = busy;
		w->in_progress = v.in_progress;
		w->idle = idle ? w->idle + 1 : 0;
		if (sd->client)
			forget = w->idle >= CALL_IDLE_INTERVALS;
		if (!forget || (int64_t)v.in_progress > 0)
			continue;
		gone = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!gone)
			abort();
		gone[ngone++] = key;
	}
	/* servers without a service whose process exited, endpoints quiet */
	for (size_t i = 0; i < ngone; i++) {
		uint64_t id = id_of(sd, &gone[i]);
		uint64_t *v = hashmap__find(sd->was, id);

		bpf_map_delete_elem(sd->map, &gone[i]);
		if (v)
			free((void *)(uintptr_t)*v);
		hashmap__delete(sd->was, id);
	}
	free(gone);
}

void tcp_loads__report(struct tcp_loads *l, const struct tcp_load_maps *m,
		       struct kmond *k, struct record *rec, uint64_t ts)
{
	const struct load_side sides[2] = {
		{ m->loads, m->max, sizeof(struct tcp_load_key), false,
		  l->was[0] },
		{ m->call_loads, m->call_max, sizeof(struct tcp_call_key), true,
		  l->was[1] },
	};
	uint64_t epoch = l->epoch, next_epoch = epoch + 1;
	uint64_t began = mono_ns();
	__u32 zero = 0;

	/* New maxima go to the other slot from now on. */
	bpf_map_update_elem(m->epoch, &zero, &next_epoch, BPF_ANY);
	l->epoch = next_epoch;
	for (int i = 0; i < 2; i++)
		report_side(l, &sides[i], k, rec, ts, epoch);
	l->last = began;
}
