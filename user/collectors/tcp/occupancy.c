// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `occupancy` records (see occupancy.h). Each target has a slot in the
 * kernel's per-target arrays: its response times (all, and by the number
 * in progress at arrival) grow there, and its steps come through the
 * load_steps ring while the interval's budget lasts. Each interval the
 * histogram is fitted (occupancy_fit.h); a two-tier fit is then refined
 * by the likelihood of the sequence of steps when the sequence is whole
 * (occupancy_sequence.h), else by the sums given n
 * (occupancy_given_n.h). The throughput is the requests of the span over
 * its length. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "bpf/tcp/tcp_load.h"
#include "config/config.h"
#include "exporters/exporter.h"
#include "collectors/collector.h"
#include "collectors/tcp/occupancy.h"
#include "collectors/tcp/occupancy_fit.h"
#include "collectors/tcp/occupancy_given_n.h"
#include "collectors/tcp/occupancy_order.h"
#include "collectors/tcp/occupancy_sequence.h"
#include "provider/provider.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/record.h"
#include "lib/xalloc.h"

/* Steps a target may send per interval: 4096 requests, whose likelihood
 * takes about 30 ms to maximise. A busier interval is refined by the sums
 * given n instead, which cost the same at any rate. */
#define STEPS_PER_INTERVAL 8192
/* Steps of a target missing from the numbers an interval received (the
 * ring lost them) past which its sequence is not whole: a step or two
 * may come in the next interval's drain, sent on another CPU a moment
 * before the last one of this. */
#define STEPS_REORDERED 2
/* A window's sequence is refined while it holds at most this many. */
#define STEPS_PER_WINDOW 32768

_Static_assert(CONFIG_MAX_OCC_TARGETS <= TCP_MAX_TARGETS,
	       "every target has a slot in the kernel's arrays");

struct steps {
	struct occ_step *v;
	size_t n, cap;
	bool whole; /* no step of the span was left out */
	uint64_t seq_min, seq_max; /* the numbers received (n > 0) */
	/* the sums of its ends' own response times squared, and of the
	 * same ends paired in order (occupancy_order.h), in s^2 */
	double own_sq, paired_sq;
};

/* One interval of a sliding window (occupancy.slide). */
struct part {
	uint64_t hist[HIST_BUCKETS];
	struct occ_given_n g;
	struct steps steps;
	uint64_t span_ns;
};

/* The intervals a sliding window holds, oldest first: the fewest last
 * ones that hold `slide` requests, at most SLIDE_PARTS. */
#define SLIDE_PARTS 64

struct slide {
	struct part *parts[SLIDE_PARTS];
	int n;
};

struct target {
	char name[CONFIG_NAME_MAX]; /* the service, or the endpoint */
	bool endpoint;
	uint32_t tiers;
	uint64_t window_ns;
	uint32_t slide_requests; /* 0: no sliding window */
	struct slide slide;
	struct tcp_target_key key;
	int slot; /* in the kernel's arrays, -1: none */
	uint64_t since; /* monotonic ns its kernel entry was made */
	struct tcp_target_data was; /* the kernel's sums at the last read */
	uint64_t interval[HIST_BUCKETS], window[HIST_BUCKETS];
	struct occ_given_n interval_n, window_n;
	struct steps isteps, wsteps;
	uint64_t seq_last; /* the last step's number received, unwrapped */
	bool seq_any; /* since the entry was made */
	uint64_t seq_next; /* past the highest of the intervals before */
	uint64_t window_start; /* monotonic ns */
};

struct occupancy {
	struct target *targets;
	int n;
	int by_slot[TCP_MAX_TARGETS]; /* target index, -1: free */
	int next_slot; /* where the search for a free one starts */
	uint64_t last; /* monotonic ns of the last report */
};

struct occupancy *occupancy__new(void)
{
	struct occupancy *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->last = mono_ns();
	for (int i = 0; i < TCP_MAX_TARGETS; i++)
		o->by_slot[i] = -1;
	return o;
}

static void target_free(struct target *t)
{
	free(t->isteps.v);
	free(t->wsteps.v);
	for (int i = 0; i < t->slide.n; i++) {
		free(t->slide.parts[i]->steps.v);
		free(t->slide.parts[i]);
	}
	t->slide.n = 0;
}

void occupancy__free(struct occupancy *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->n; i++)
		target_free(&o->targets[i]);
	free(o->targets);
	free(o);
}

static void steps_add(struct steps *s, const struct occ_step *v, size_t n)
{
	if (s->n + n > s->cap) {
		s->cap = s->n + n > 2 * s->cap ? s->n + n : 2 * s->cap;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	memcpy(s->v + s->n, v, n * sizeof(*v));
	s->n += n;
}

static void steps_reset(struct steps *s)
{
	s->n = 0;
	s->whole = true;
	s->paired_sq = 0;
	s->own_sq = 0;
}

/* A target's key in the kernel: its service's id, or its endpoint. */
static bool key_of(const struct occupancy_target_cfg *c, struct provider *p,
		   struct tcp_target_key *k)
{
	memset(k, 0, sizeof(*k));
	if (c->endpoint[0]) {
		memcpy(k->call.addr, c->addr, 16);
		k->call.port = c->port;
		k->call.family = c->family;
		return true;
	}
	k->svc = provider__service_id(p, c->service);
	return k->svc != 0;
}

/* Gives t a slot and its kernel entry, the sums there from zero. Slots
 * are taken in turn, so one just freed, which a request begun before may
 * still count in, is the last to be taken again. */
static void target_enter(struct occupancy *o, struct target *t, int idx,
			 const struct occupancy_maps *m)
{
	static const struct tcp_target_data zero; /* 17 KiB */
	__s64 left = STEPS_PER_INTERVAL;
	struct tcp_target v = { 0 };
	int s;

	for (s = 0; s < TCP_MAX_TARGETS; s++)
		if (o->by_slot[(o->next_slot + s) % TCP_MAX_TARGETS] < 0)
			break;
	if (s == TCP_MAX_TARGETS)
		return; /* not past CONFIG_MAX_OCC_TARGETS */
	v.slot = (o->next_slot + s) % TCP_MAX_TARGETS;
	o->next_slot = (v.slot + 1) % TCP_MAX_TARGETS;
	if (bpf_map_update_elem(m->data, &v.slot, &zero, BPF_ANY) ||
	    bpf_map_update_elem(m->steps_left, &v.slot, &left, BPF_ANY) ||
	    bpf_map_update_elem(m->targets, &t->key, &v, BPF_ANY)) {
		log_warn("occupancy: no kernel entry for %s: %s", t->name,
			 strerror(errno));
		return;
	}
	t->slot = (int)v.slot;
	o->by_slot[t->slot] = idx;
	t->since = mono_ns();
	memset(&t->was, 0, sizeof(t->was));
	steps_reset(&t->isteps);
	t->seq_any = false; /* numbered from 0 again */
}

static void target_leave(struct occupancy *o, struct target *t,
			 const struct occupancy_maps *m)
{
	if (t->slot < 0)
		return;
	bpf_map_delete_elem(m->targets, &t->key);
	o->by_slot[t->slot] = -1;
	t->slot = -1;
}

static bool same_target(const struct target *t,
			const struct occupancy_target_cfg *c)
{
	return t->endpoint == !!c->endpoint[0] &&
	       !strcmp(t->name, c->endpoint[0] ? c->endpoint : c->service) &&
	       t->window_ns == c->window_ns && t->slide_requests == c->slide;
}

int occupancy__configure(struct occupancy *o, const struct tcp_cfg *tc,
			 struct provider *p, const struct occupancy_maps *m)
{
	struct target *t =
		xcalloc(tc->noccupancy ? tc->noccupancy : 1, sizeof(*t));
	bool *kept = xcalloc(o->n ? o->n : 1, sizeof(*kept));
	struct tcp_target_key key;

	for (int i = 0; i < tc->noccupancy; i++) {
		const struct occupancy_target_cfg *c = &tc->occupancy[i];
		int j;

		/* the same target over the same window goes on */
		for (j = 0; j < o->n; j++)
			if (!kept[j] && same_target(&o->targets[j], c))
				break;
		if (j < o->n) {
			t[i] = o->targets[j];
			kept[j] = true;
		} else {
			snprintf(t[i].name, sizeof(t[i].name), "%s",
				 c->endpoint[0] ? c->endpoint : c->service);
			t[i].endpoint = c->endpoint[0];
			t[i].window_ns = c->window_ns;
			t[i].slide_requests = c->slide;
			t[i].slot = -1;
			steps_reset(&t[i].isteps);
			steps_reset(&t[i].wsteps);
		}
		t[i].tiers = c->tiers;
	}
	/* the entries of targets gone (a service's id is its name's: a
	 * reload may give it another) */
	for (int j = 0; j < o->n; j++) {
		if (!kept[j]) {
			target_leave(o, &o->targets[j], m);
			target_free(&o->targets[j]);
		}
	}
	for (int i = 0; i < tc->noccupancy; i++) {
		bool known = key_of(&tc->occupancy[i], p, &key);

		if (t[i].slot >= 0 &&
		    (!known || memcmp(&key, &t[i].key, sizeof(key))))
			target_leave(o, &t[i], m);
		if (t[i].slot >= 0) {
			o->by_slot[t[i].slot] = i;
			continue;
		}
		t[i].key = key;
		if (known)
			target_enter(o, &t[i], i, m);
		if (!t[i].window_start) /* new: from its entry on */
			t[i].window_start = t[i].slot >= 0 ? t[i].since :
							     mono_ns();
		else if (t[i].since > t[i].window_start)
			/* a window begun before its entry was made again */
			t[i].wsteps.whole = false;
	}
	free(kept);
	free(o->targets);
	o->targets = t;
	o->n = tc->noccupancy;
	return 0;
}

int occupancy__step(void *ctx, void *data, size_t size)
{
	struct occupancy *o = ctx;
	const struct tcp_load_step *s = data;
	struct occ_step step;
	struct target *t;
	uint64_t seq;

	if (size != sizeof(*s) || s->slot >= TCP_MAX_TARGETS ||
	    o->by_slot[s->slot] < 0)
		return 0;
	t = &o->targets[o->by_slot[s->slot]];
	/* the kernel's budget limits them; two of them may meet here */
	if (t->isteps.n >= 2 * STEPS_PER_INTERVAL) {
		t->isteps.whole = false;
		return 0;
	}
	/* the number modulo 2^32, unwrapped next to the last one */
	seq = t->seq_any ?
		      t->seq_last + (int32_t)(s->seq - (uint32_t)t->seq_last) :
		      s->seq;
	if (!t->seq_any) {
		t->seq_any = true;
		t->seq_next = seq;
	}
	t->seq_last = seq;
	if (!t->isteps.n || seq < t->isteps.seq_min)
		t->isteps.seq_min = seq;
	if (!t->isteps.n || seq > t->isteps.seq_max)
		t->isteps.seq_max = seq;
	step = (struct occ_step){
		.t_ns = s->t_ns, .n = s->n, .delta = s->delta, .own = s->own
	};
	steps_add(&t->isteps, &step, 1);
	return 0;
}

/* Whether the ring lost steps of t this interval: numbers missing
 * between those received, or since the interval before. */
static void check_lost(struct target *t)
{
	struct steps *s = &t->isteps;

	if (!s->n)
		return;
	if (s->seq_max - s->seq_min + 1 > s->n + STEPS_REORDERED ||
	    s->seq_min > t->seq_next + STEPS_REORDERED)
		s->whole = false;
	if (s->seq_max >= t->seq_next)
		t->seq_next = s->seq_max + 1;
}

/* The increase of the kernel's sums since t->was, as the interval's;
 * t->was becomes now. */
static void add_data(struct target *t, const struct tcp_target_data *now)
{
	/* (ns >> shift)^2 in s^2 */
	const double sq =
		ldexp(1e-9, TCP_LOAD_SQ_SHIFT) * ldexp(1e-9, TCP_LOAD_SQ_SHIFT);
	struct occ_given_n *g = &t->interval_n;

	for (int n = 0; n < TCP_LOAD_GIVEN_N && n < OCC_GIVEN_N; n++) {
		g->count[n] += (double)(now->count[n] - t->was.count[n]);
		g->sum[n] += (double)(now->sum_ns[n] - t->was.sum_ns[n]) / 1e9;
		g->sum_sq[n] +=
			(double)(now->sum_sq[n] - t->was.sum_sq[n]) * sq;
	}
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		g->empty[b] += now->empty[b] - t->was.empty[b];
		t->interval[b] += now->all[b] - t->was.all[b];
	}
	t->was = *now;
}

static void merge_given_n(struct occ_given_n *to, const struct occ_given_n *g)
{
	for (int n = 0; n < OCC_GIVEN_N; n++) {
		to->count[n] += g->count[n];
		to->sum[n] += g->sum[n];
		to->sum_sq[n] += g->sum_sq[n];
	}
	for (uint32_t b = 0; b < HIST_BUCKETS; b++)
		to->empty[b] += g->empty[b];
}

/* By time (the ring is in order but for CPUs racing by a few ns). */
static void sort_steps(struct steps *s)
{
	for (size_t i = 1; i < s->n; i++) {
		struct occ_step x = s->v[i];
		size_t j = i;

		for (; j > 0 && s->v[j - 1].t_ns > x.t_ns; j--)
			s->v[j] = s->v[j - 1];
		s->v[j] = x;
	}
}

static uint64_t count_of(const uint64_t *b)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < HIST_BUCKETS; i++)
		n += b[i];
	return n;
}

/* How much requests overtook each other (occupancy_order.h): the share
 * of the sum of the requests' own squared response times (each end's
 * step carries its own) that pairing the departures with the arrivals
 * in order does not find; NAN where no request ended. Past the limit
 * the fit does not hold. On simulated tandems whose front serves side by
 * side and hands on after a random delay (exponential, 5 ms; rho 0.31
 * and 0.70) the lower tier read 0.47 to 0.59 with shares of 0.007 to
 * 0.016; FIFO tiers give 0. */
#define OCC_OVERTAKEN_LIMIT 0.003

static double overtaken_share(const struct steps *s)
{
	if (!(s->own_sq > 0))
		return NAN;
	return (s->own_sq - s->paired_sq) / s->own_sq;
}

/* A list of one figure per tier, or null where it is not known. */
static void emit_rhos(struct record *rec, const char *name, bool known,
		      const double *v, int tiers)
{
	if (!known) {
		record__null(rec, name);
		return;
	}
	record__array_begin(rec, name);
	for (int i = 0; i < tiers; i++)
		record__double(rec, NULL, v[i]);
	record__array_end(rec);
}

static void emit(struct kmond *k, struct record *rec, uint64_t ts,
		 const struct target *t, const char *scope,
		 const uint64_t *buckets, const struct occ_given_n *g,
		 const struct steps *s, uint64_t span_ns)
{
	double lambda = (double)count_of(buckets) / ((double)span_ns / 1e9);
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	bool sequence = false, given_n = false;
	double overtaken;
	struct occ_fit f;

	occ__fit(buckets, lambda, (int)t->tiers, &f);
	if (s->whole)
		sequence = occ__refine_sequence(s->v, s->n, &f) == 0;
	if (!sequence)
		given_n = occ__refine_given_n(g, &f) == 0;
	if (sequence)
		occ__check_bare(g->empty, &f);
	overtaken = overtaken_share(s);
	if (f.ok && overtaken > OCC_OVERTAKEN_LIMIT) {
		f.ok = 0;
		f.why = "requests overtake";
	}
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	record__begin(rec, "occupancy", ts, k->cfg.node);
	record__str(rec, t->endpoint ? "endpoint" : "service", t->name);
	snprintf(rec->key, sizeof(rec->key), "%s", t->name);
	record__str(rec, "side", t->endpoint ? "client" : "server");
	record__str(rec, "scope", scope);
	record__u64(rec, "span_ns", span_ns);
	record__u64(rec, "tiers", t->tiers);
	record__u64(rec, "samples", f.samples);
	record__double(rec, "throughput", lambda);
	emit_rhos(rec, "rho", f.ok, f.rho, f.tiers);
	emit_rhos(rec, "rho_lo", f.ok && f.interval, f.rho_lo, f.tiers);
	emit_rhos(rec, "rho_hi", f.ok && f.interval, f.rho_hi, f.tiers);
	record__object_begin(rec, "fit");
	record__bool(rec, "holds", f.ok);
	if (f.ok)
		record__null(rec, "why");
	else
		record__str(rec, "why", f.why);
	record__double(rec, "ks", f.ks);
	record__double(rec, "ks_limit", f.ks_limit);
	record__double(rec, "cv", f.cv);
	record__bool(rec, "sequence", sequence);
	record__u64(rec, "delay_ns", f.delay_ns);
	record__u64(rec, "bare_samples", f.bare_samples);
	if (isnan(f.bare_ks))
		record__null(rec, "bare_ks");
	else
		record__double(rec, "bare_ks", f.bare_ks);
	if (isnan(f.bare_dispersion))
		record__null(rec, "bare_dispersion");
	else
		record__double(rec, "bare_dispersion", f.bare_dispersion);
	if (isnan(overtaken))
		record__null(rec, "overtaken");
	else
		record__double(rec, "overtaken", overtaken);
	record__bool(rec, "given_n", given_n);
	record__u64(rec, "cpu_ns", cpu);
	record__object_end(rec);
	record__end(rec);
	exporter__send(k->exporter, rec);
}

/* This interval's sums of t from the kernel, and its budget of steps
 * for the next. */
static void read_target(struct target *t, const struct occupancy_maps *m)
{
	static struct tcp_target_data now; /* 17 KiB: not on the stack */
	__u32 slot = (__u32)t->slot;
	__s64 left = 0, full = STEPS_PER_INTERVAL;

	if (!bpf_map_lookup_elem(m->data, &slot, &now))
		add_data(t, &now);
	/* spent: steps were left out */
	if (bpf_map_lookup_elem(m->steps_left, &slot, &left) || left <= 0)
		t->isteps.whole = false;
	bpf_map_update_elem(m->steps_left, &slot, &full, BPF_ANY);
}

static void close_window(struct target *t, struct kmond *k, struct record *rec,
			 uint64_t ts, uint64_t now, uint64_t span)
{
	for (uint32_t b = 0; b < HIST_BUCKETS; b++)
		t->window[b] += t->interval[b];
	merge_given_n(&t->window_n, &t->interval_n);
	if (!t->isteps.whole || t->wsteps.n + t->isteps.n > STEPS_PER_WINDOW)
		t->wsteps.whole = false;
	if (t->wsteps.whole)
		steps_add(&t->wsteps, t->isteps.v, t->isteps.n);
	t->wsteps.paired_sq += t->isteps.paired_sq;
	t->wsteps.own_sq += t->isteps.own_sq;
	/* the window closes at the report nearest its end */
	if (now - t->window_start + span / 2 < t->window_ns)
		return;
	if (count_of(t->window))
		emit(k, rec, ts, t, "window", t->window, &t->window_n,
		     &t->wsteps, now - t->window_start);
	memset(t->window, 0, sizeof(t->window));
	memset(&t->window_n, 0, sizeof(t->window_n));
	steps_reset(&t->wsteps);
	t->window_start = now;
}

/* The interval just read joins t's sliding window, whose oldest
 * intervals leave while the others hold its requests without them. */
static void slide_push(struct target *t, uint64_t span)
{
	struct slide *w = &t->slide;
	struct part *p;
	uint64_t total = 0;

	if (w->n == SLIDE_PARTS) { /* the oldest's room, for the newest */
		p = w->parts[0];
		memmove(w->parts, w->parts + 1, --w->n * sizeof(*w->parts));
	} else {
		p = xcalloc(1, sizeof(*p));
	}
	memcpy(p->hist, t->interval, sizeof(p->hist));
	p->g = t->interval_n;
	steps_reset(&p->steps);
	steps_add(&p->steps, t->isteps.v, t->isteps.n);
	p->steps.whole = t->isteps.whole;
	p->steps.paired_sq = t->isteps.paired_sq;
	p->steps.own_sq = t->isteps.own_sq;
	p->span_ns = span;
	w->parts[w->n++] = p;
	for (int i = 0; i < w->n; i++)
		total += count_of(w->parts[i]->hist);
	while (w->n > 1 &&
	       total - count_of(w->parts[0]->hist) >= t->slide_requests) {
		total -= count_of(w->parts[0]->hist);
		free(w->parts[0]->steps.v);
		free(w->parts[0]);
		memmove(w->parts, w->parts + 1, --w->n * sizeof(*w->parts));
	}
}

/* The sliding window's record, once it holds its requests: its
 * intervals' sums, and their steps while each is whole. */
static void emit_slide(struct target *t, struct kmond *k, struct record *rec,
		       uint64_t ts)
{
	static uint64_t hist[HIST_BUCKETS];
	static struct occ_given_n g;
	struct steps s = { .whole = true };
	uint64_t span = 0;

	memset(hist, 0, sizeof(hist));
	memset(&g, 0, sizeof(g));
	for (int i = 0; i < t->slide.n; i++) {
		const struct part *p = t->slide.parts[i];

		for (uint32_t b = 0; b < HIST_BUCKETS; b++)
			hist[b] += p->hist[b];
		merge_given_n(&g, &p->g);
		span += p->span_ns;
		s.whole = s.whole && p->steps.whole &&
			  s.n + p->steps.n <= STEPS_PER_WINDOW;
		if (s.whole)
			steps_add(&s, p->steps.v, p->steps.n);
		s.paired_sq += p->steps.paired_sq;
		s.own_sq += p->steps.own_sq;
	}
	if (count_of(hist) >= t->slide_requests)
		emit(k, rec, ts, t, "sliding", hist, &g, &s, span);
	free(s.v);
}

void occupancy__report(struct occupancy *o, const struct occupancy_maps *m,
		       struct kmond *k, struct record *rec, uint64_t ts)
{
	uint64_t now = mono_ns(), span;
	int i;

	/* Every target's sums first, then the fits (tens of ms each): the
	 * sums are then those of the steps just drained, but for the
	 * requests ending in between. */
	for (i = 0; i < o->n; i++) {
		if (o->targets[i].slot >= 0)
			read_target(&o->targets[i], m);
	}
	for (i = 0; i < o->n; i++) {
		struct target *t = &o->targets[i];

		if (t->slot < 0)
			continue;
		check_lost(t);
		sort_steps(&t->isteps);
		occ__order_sums(t->isteps.v, t->isteps.n, TCP_LOAD_SQ_SHIFT,
				&t->isteps.own_sq, &t->isteps.paired_sq);
		/* a target made during the interval counts from then */
		span = now - (t->since > o->last ? t->since : o->last);
		if (count_of(t->interval))
			emit(k, rec, ts, t, "interval", t->interval,
			     &t->interval_n, &t->isteps, span);
		if (t->window_ns)
			close_window(t, k, rec, ts, now, span);
		if (t->slide_requests) {
			slide_push(t, span);
			emit_slide(t, k, rec, ts);
		}
		memset(t->interval, 0, sizeof(t->interval));
		memset(&t->interval_n, 0, sizeof(t->interval_n));
		steps_reset(&t->isteps);
	}
	o->last = now;
}
