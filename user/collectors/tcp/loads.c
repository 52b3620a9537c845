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
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/hostport.h"
#include "collectors/collector.h"
#include "exporters/exporter.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "collectors/tcp/loads.h"
#include "bpf/tcp/tcp_load.h"

/* What was reported of one server or endpoint. */
struct load_was {
	uint64_t t; /* monotonic ns of the read */
	uint64_t arrivals, completions, latency_sum;
	uint64_t area, busy; /* at t */
	uint64_t in_progress;
	uint64_t outcomes, errors;
	uint32_t idle; /* intervals in a row with nothing (client side) */
};

/* An endpoint nobody called for this many intervals is forgotten, so the
 * endpoints called over time do not fill the slots. (A call that begins
 * while its slot goes ends on the next one, below zero in progress: that
 * slot's sums are not whole, so it is not reported and goes at once.) */
#define CALL_IDLE_INTERVALS 64

struct tcp_loads {
	struct hashmap *was[2]; /* server, client: id -> struct load_was * */
	/* Slots forgotten at the last report, zeroed then: a program that
	 * found one just before may have added to it since, so they are
	 * zeroed again and freed at this one. */
	__u32 *retired;
	size_t nretired;
	uint64_t epoch;
	uint64_t last; /* monotonic ns: when the last report began */
	uint64_t broken; /* slots found below zero in progress, unreported */
	/* per slot, outcomes user space decided since the last report
	 * (tcp_loads__outcome) */
	struct {
		uint64_t outcomes, errors;
	} late[TCP_MAX_LOADS];
};

void tcp_loads__outcome(struct tcp_loads *l, uint32_t slot, bool error)
{
	if (slot >= TCP_MAX_LOADS)
		return;
	l->late[slot].outcomes++;
	l->late[slot].errors += error;
}

uint64_t tcp_loads__broken(const struct tcp_loads *l)
{
	return l->broken;
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
	if (!l)
		return;
	for (int i = 0; i < 2; i++)
		hashmap__free_values(l->was[i], free);
	free(l->retired);
	free(l);
}

int tcp_loads__init(const struct tcp_load_maps *m)
{
	for (__u32 slot = 0; slot < TCP_MAX_LOADS; slot++)
		if (bpf_map_update_elem(m->free, NULL, &slot, BPF_ANY))
			return -errno;
	return 0;
}

/* An endpoint called (client side), not a server. */
static bool is_call(const struct tcp_load_key *key)
{
	return key->call.family != 0;
}

/* A copy no writer was changing: writers bracket their changes with
 * begun++ and an add to one of four counts (tcp_load.h), so a whole copy
 * that the next copy repeats holds no half-done change. The slot must
 * still be key's. */
static int read_load(int fd, __u32 slot, const struct tcp_load_key *key,
		     struct tcp_load *out)
{
	struct tcp_load again;

	for (int i = 0; i < 64; i++) {
		if (bpf_map_lookup_elem(fd, &slot, out) ||
		    bpf_map_lookup_elem(fd, &slot, &again))
			return -1;
		if (memcmp(&out->key, key, sizeof(*key)))
			return -1;
		if (tcp_load_whole(out) && !memcmp(out, &again, sizeof(again)))
			return 0;
	}
	return -1; /* writers all along: read it next interval */
}

/* Forgets a key's slot: out of load_slots and zeroed (its owner too, so
 * a connection that kept it looks for a slot again); freed at the next
 * report. */
static void retire_slot(struct tcp_loads *l, const struct tcp_load_maps *m,
			const struct tcp_load_key *key, __u32 slot)
{
	struct tcp_load zero = { 0 };

	bpf_map_delete_elem(m->slots, key);
	bpf_map_update_elem(m->loads, &slot, &zero, BPF_ANY);
	l->late[slot % TCP_MAX_LOADS].outcomes = 0;
	l->late[slot % TCP_MAX_LOADS].errors = 0;
	l->retired =
		realloc(l->retired, (l->nretired + 1) * sizeof(*l->retired));
	if (!l->retired)
		abort();
	l->retired[l->nretired++] = slot;
}

/* The slots retired at the last report: zeroed again, back in load_free. */
static void free_retired(struct tcp_loads *l, const struct tcp_load_maps *m)
{
	struct tcp_load zero = { 0 };

	for (size_t i = 0; i < l->nretired; i++) {
		bpf_map_update_elem(m->loads, &l->retired[i], &zero, BPF_ANY);
		bpf_map_update_elem(m->free, NULL, &l->retired[i], BPF_ANY);
	}
	l->nretired = 0;
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

/* A server without a service whose process exited: its slot can go. */
static bool server_gone(struct kmond *k, const struct tcp_load_key *key)
{
	struct proc_name who;

	if (key->svc)
		return false;
	provider__name(k->provider, key->pid, 0, &who);
	return who.gone;
}

/* Who the record is of: a server's service or process, or the endpoint
 * its callers call. */
static void emit_who(struct kmond *k, struct record *rec,
		     const struct tcp_load_key *key)
{
	const struct tcp_call_key *call = &key->call;
	struct proc_name who;
	char ep[64]; /* "[v6]:port" is at most 53 */

	if (is_call(key)) {
		hostport__format(call->family, call->addr, call->port, ep,
				 sizeof(ep));
		record__str(rec, "endpoint", ep);
		snprintf(rec->key, sizeof(rec->key), "%s", ep);
		record__str(rec, "side", "client");
		return;
	}
	provider__name(k->provider, key->pid, key->svc, &who);
	if (key->svc) {
		record__str(rec, "service", who.service ? who.service : "?");
		snprintf(rec->key, sizeof(rec->key), "%s",
			 who.service ? who.service : "?");
	} else {
		record__process(rec, key->pid, who.comm, NULL);
	}
	record__str(rec, "side", "server");
}

static void emit(struct tcp_loads *l, struct kmond *k, struct record *rec,
		 uint64_t ts, const struct tcp_load_key *key, __u32 slot,
		 const struct load_was *w, const struct tcp_load *v, uint64_t t,
		 uint64_t area, uint64_t busy, uint64_t max)
{
	double dt = (double)(t - w->t);
	uint64_t done = v->completions - w->completions;
	/* A request ends at its send's start, but counts once the send
	 * returns: a read between the two counted it in progress up to the
	 * read, so the next interval's increase may be below zero (and a
	 * call's busy time a little over the interval). */
	double area_ns = fmax(0, (double)(int64_t)(area - w->area));
	double busy_ns = fmin(dt, fmax(0, (double)(int64_t)(busy - w->busy)));

	record__begin(rec, "load", ts, k->cfg.node);
	emit_who(k, rec, key);
	record__u64(rec, "interval_ns", t - w->t);
	record__u64(rec, "arrivals", v->arrivals - w->arrivals);
	record__u64(rec, "completions", done);
	record__double(rec, "occupancy", dt > 0 ? area_ns / dt : 0);
	record__double(rec, "busy", dt > 0 ? busy_ns / dt : 0);
	record__u64(rec, "concurrency_max", max);
	record__u64(rec, "in_progress", tcp_load_in_progress(v->begun_n));
	if (done)
		record__u64(rec, "latency_mean_ns",
			    (v->latency_sum - w->latency_sum) / done);
	else
		record__null(rec, "latency_mean_ns");
	record__u64(rec, "outcomes",
		    v->outcomes - w->outcomes + l->late[slot].outcomes);
	record__u64(rec, "errors",
		    v->errors - w->errors + l->late[slot].errors);
	l->late[slot].outcomes = 0;
	l->late[slot].errors = 0;
	record__end(rec);
	exporter__send(k->exporter, rec);
}

/* The key's id in its side's was. */
static uint64_t id_of(const struct tcp_load_key *key)
{
	if (is_call(key))
		return fnv1a(&key->call, sizeof(key->call));
	return (uint64_t)key->svc << 32 | key->pid;
}

/* Forgets what was reported of a key whose slot went. */
static void forget_was(struct tcp_loads *l, const struct tcp_load_key *key)
{
	struct hashmap *was = l->was[is_call(key)];
	uint64_t id = id_of(key), *v = hashmap__find(was, id);

	if (v)
		free((void *)(uintptr_t)*v);
	hashmap__delete(was, id);
}

void tcp_loads__report(struct tcp_loads *l, const struct tcp_load_maps *m,
		       struct kmond *k, struct record *rec,
		       uint64_t realtime_offset)
{
	struct tcp_load_key key, next;
	struct gone {
		struct tcp_load_key key;
		__u32 slot;
	} *gone = NULL;
	uint64_t epoch = l->epoch, next_epoch = epoch + 1;
	uint64_t began = mono_ns();
	size_t ngone = 0;
	__u32 zero = 0, slot;
	bool more;

	/* New maxima go to the other slot from now on. */
	bpf_map_update_elem(m->epoch, &zero, &next_epoch, BPF_ANY);
	l->epoch = next_epoch;
	free_retired(l, m);
	more = bpf_map_get_next_key(m->slots, NULL, &next) == 0;
	while (more) {
		uint64_t t, area, busy, max, n;
		struct load_was *w;
		struct tcp_load v;
		bool idle, broken, forget;

		key = next;
		more = bpf_map_get_next_key(m->slots, &key, &next) == 0;
		if (bpf_map_lookup_elem(m->slots, &key, &slot) ||
		    read_load(m->loads, slot, &key, &v))
			continue;
		t = mono_ns();
		n = tcp_load_in_progress(v.begun_n);
		w = was_of(l, l->was[is_call(&key)], id_of(&key));
		area = tcp_load__area(v.area, n, t);
		busy = tcp_load__busy(v.busy, n, t);
		max = TCP_LOAD_MAX_OF(v.max[epoch & 1], epoch);
		/* in progress from the last interval, or now: also the max */
		if (w->in_progress > max)
			max = w->in_progress;
		if (n > max)
			max = n;
		/* an interval of extended answers alone moves area and busy */
		/* outcomes count at a request's end, which can come in an
		 * interval after its response began */
		idle = v.arrivals == w->arrivals && v.outcomes == w->outcomes &&
		       !l->late[slot].outcomes &&
		       v.completions == w->completions && !n &&
		       !w->in_progress && area == w->area && busy == w->busy;
		/* below zero: a start was lost (a reload, a slot retired under a
		 * call), its end counted: the sums are not whole */
		broken = (int64_t)n < 0;
		l->broken += broken;
		if (!idle && !broken)
			emit(l, k, rec, t + realtime_offset, &key, slot, w, &v,
			     t, area, busy, max);
		w->t = t;
		w->arrivals = v.arrivals;
		w->completions = v.completions;
		w->latency_sum = v.latency_sum;
		w->outcomes = v.outcomes;
		w->errors = v.errors;
		w->area = area;
		w->busy = busy;
		w->in_progress = n;
		w->idle = idle ? w->idle + 1 : 0;
		/* a server also when it exited after its last report: its
		 * slot would be lost */
		forget = broken ||
			 (is_call(&key) ? w->idle >= CALL_IDLE_INTERVALS :
					  server_gone(k, &key));
		if (!forget || (int64_t)n > 0)
			continue;
		gone = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!gone)
			abort();
		gone[ngone++] = (struct gone){ key, slot };
	}
	/* servers without a service whose process exited, endpoints quiet */
	for (size_t i = 0; i < ngone; i++) {
		retire_slot(l, m, &gone[i].key, gone[i].slot);
		forget_was(l, &gone[i].key);
	}
	free(gone);
	l->last = began;
}
