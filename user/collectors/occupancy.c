// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `occupancy` records (see occupancy.h). The tcp collector hands over
 * each topology edge's histogram of the interval; the edges into one
 * target service add up to its response times, whatever the client. The
 * throughput is the requests of the span over its length. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "bpf/tcp_load.h"
#include "config/config.h"
#include "exporters/exporter.h"
#include "collectors/collector.h"
#include "collectors/occupancy.h"
#include "collectors/occupancy_fit.h"
#include "collectors/occupancy_given_n.h"
#include "provider/provider.h"
#include "lib/record.h"

struct target {
	char service[CONFIG_NAME_MAX];
	uint32_t tiers;
	uint64_t window_ns;
	struct hist interval; /* 8 KiB each */
	struct hist window;
	uint64_t window_start; /* monotonic ns */
	/* By the number in progress at arrival (occupancy_given_n.h): the
	 * kernel's cumulative sums at the last read, of service id svc. */
	uint32_t svc;
	struct tcp_load_given_n was;
	struct occ_given_n interval_n, window_n;
};

struct occupancy {
	struct target *targets;
	int n;
	uint64_t last; /* monotonic ns of the last report */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct occupancy *occupancy__new(void)
{
	struct occupancy *o = calloc(1, sizeof(*o));

	if (o)
		o->last = mono_ns();
	return o;
}

void occupancy__free(struct occupancy *o)
{
	if (!o)
		return;
	free(o->targets);
	free(o);
}

int occupancy__configure(struct occupancy *o, const struct tcp_cfg *tc)
{
	struct target *t = calloc(tc->noccupancy ? tc->noccupancy : 1,
				  sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (int i = 0; i < tc->noccupancy; i++) {
		const struct occupancy_target_cfg *c = &tc->occupancy[i];

		/* the same service over the same window goes on */
		for (int j = 0; j < o->n; j++)
			if (!strcmp(o->targets[j].service, c->service) &&
			    o->targets[j].window_ns == c->window_ns)
				t[i] = o->targets[j];
		if (strcmp(t[i].service, c->service)) {
			memcpy(t[i].service, c->service, sizeof(t[i].service));
			t[i].window_start = mono_ns();
		}
		t[i].tiers = c->tiers;
		t[i].window_ns = c->window_ns;
	}
	free(o->targets);
	o->targets = t;
	o->n = tc->noccupancy;
	return 0;
}

void occupancy__add(struct occupancy *o, const char *service,
		    const struct hist *h)
{
	if (!service)
		return;
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->targets[i].service, service))
			hist__merge(&o->targets[i].interval, h);
}

/* The increase of the kernel's sums since t->was, added to the
 * interval's; t->was becomes now. */
static void add_given_n(struct target *t, const struct tcp_load_given_n *now)
{
	/* (ns >> shift)^2 in s^2 */
	const double sq = ldexp(1e-9, TCP_LOAD_SQ_SHIFT) *
			  ldexp(1e-9, TCP_LOAD_SQ_SHIFT);
	struct occ_given_n *g = &t->interval_n;

	for (int n = 0; n < TCP_LOAD_GIVEN_N && n < OCC_GIVEN_N; n++) {
		g->count[n] += (double)(now->count[n] - t->was.count[n]);
		g->sum[n] += (double)(now->sum_ns[n] - t->was.sum_ns[n]) / 1e9;
		g->sum_sq[n] += (double)(now->sum_sq[n] - t->was.sum_sq[n]) * sq;
	}
	for (uint32_t b = 0; b < HIST_BUCKETS; b++)
		g->empty[b] += now->empty[b] - t->was.empty[b];
	t->was = *now;
}

void occupancy__read_given_n(struct occupancy *o, int fd,
			     struct provider *p)
{
	static struct tcp_load_given_n now; /* 9 KiB: not on the stack */

	for (int i = 0; i < o->n; i++) {
		struct target *t = &o->targets[i];
		struct tcp_load_key key = {
			.svc = provider__service_id(p, t->service),
		};

		if (!key.svc)
			continue;
		if (key.svc != t->svc) {
			/* a new target (or a service renumbered by a
			 * reload): its sums start from what is there now */
			memset(&now, 0, sizeof(now));
			bpf_map_update_elem(fd, &key, &now, BPF_NOEXIST);
			if (bpf_map_lookup_elem(fd, &key, &now))
				continue; /* full: the histogram fit alone */
			t->svc = key.svc;
			t->was = now;
			continue;
		}
		if (bpf_map_lookup_elem(fd, &key, &now)) {
			t->svc = 0; /* gone: made again at the next read */
			continue;
		}
		add_given_n(t, &now);
	}
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

static void emit(struct kmond *k, struct record *rec, uint64_t ts,
		 const struct target *t, const char *scope,
		 const struct hist *h, const struct occ_given_n *g,
		 uint64_t span_ns)
{
	double lambda = (double)hist__count(h) / ((double)span_ns / 1e9);
	uint64_t cpu = thread_cpu_ns();
	struct occ_fit f;
	bool given_n;

	occ__fit(h->buckets, lambda, (int)t->tiers, &f);
	given_n = occ__refine_given_n(g, &f) == 0;
	cpu = thread_cpu_ns() - cpu;
	record__begin(rec, "occupancy", ts, k->cfg.node);
	record__str(rec, "service", t->service);
	snprintf(rec->key, sizeof(rec->key), "%s", t->service);
	record__str(rec, "side", "server");
	record__str(rec, "scope", scope);
	record__u64(rec, "span_ns", span_ns);
	record__u64(rec, "tiers", t->tiers);
	record__u64(rec, "samples", f.samples);
	record__double(rec, "throughput", lambda);
	if (f.ok) {
		record__array_begin(rec, "rho");
		for (int i = 0; i < f.tiers; i++)
			record__double(rec, NULL, f.rho[i]);
		record__array_end(rec);
	} else {
		record__null(rec, "rho");
	}
	record__object_begin(rec, "fit");
	record__bool(rec, "holds", f.ok);
	if (f.ok)
		record__null(rec, "why");
	else
		record__str(rec, "why", f.why);
	record__double(rec, "ks", f.ks);
	record__double(rec, "ks_limit", f.ks_limit);
	record__double(rec, "cv", f.cv);
	record__bool(rec, "given_n", given_n);
	record__u64(rec, "cpu_ns", cpu);
	record__object_end(rec);
	record__end(rec);
	exporter__send(k->exporter, rec);
}

void occupancy__report(struct occupancy *o, struct kmond *k,
		       struct record *rec, uint64_t ts)
{
	uint64_t now = mono_ns(), span = now - o->last;

	o->last = now;
	for (int i = 0; i < o->n; i++) {
		struct target *t = &o->targets[i];

		if (hist__count(&t->interval))
			emit(k, rec, ts, t, "interval", &t->interval,
			     &t->interval_n, span);
		if (t->window_ns) {
			hist__merge(&t->window, &t->interval);
			merge_given_n(&t->window_n, &t->interval_n);
			/* the window closes at the report nearest its end */
			if (now - t->window_start + span / 2 >= t->window_ns) {
				if (hist__count(&t->window))
					emit(k, rec, ts, t, "window",
					     &t->window, &t->window_n,
					     now - t->window_start);
				hist__reset(&t->window);
				memset(&t->window_n, 0, sizeof(t->window_n));
				t->window_start = now;
			}
		}
		hist__reset(&t->interval);
		memset(&t->interval_n, 0, sizeof(t->interval_n));
	}
}
