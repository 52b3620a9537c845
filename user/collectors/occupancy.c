// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `occupancy` records (see occupancy.h). The tcp collector hands over
 * each topology edge's histogram of the interval; the edges into one
 * target service add up to its response times, whatever the client. The
 * throughput is the requests of the span over its length. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "exporters/exporter.h"
#include "collectors/collector.h"
#include "collectors/occupancy.h"
#include "collectors/occupancy_fit.h"
#include "lib/record.h"

struct target {
	char service[CONFIG_NAME_MAX];
	uint32_t tiers;
	uint64_t window_ns;
	struct hist interval; /* 8 KiB each */
	struct hist window;
	uint64_t window_start; /* monotonic ns */
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

static void emit(struct kmond *k, struct record *rec, uint64_t ts,
		 const struct target *t, const char *scope,
		 const struct hist *h, uint64_t span_ns)
{
	double lambda = (double)hist__count(h) / ((double)span_ns / 1e9);
	uint64_t cpu = thread_cpu_ns();
	struct occ_fit f;

	occ__fit(h->buckets, lambda, (int)t->tiers, &f);
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
			emit(k, rec, ts, t, "interval", &t->interval, span);
		if (t->window_ns) {
			hist__merge(&t->window, &t->interval);
			/* the window closes at the report nearest its end */
			if (now - t->window_start + span / 2 >= t->window_ns) {
				if (hist__count(&t->window))
					emit(k, rec, ts, t, "window",
					     &t->window, now - t->window_start);
				hist__reset(&t->window);
				t->window_start = now;
			}
		}
		hist__reset(&t->interval);
	}
}
