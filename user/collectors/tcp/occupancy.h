/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `occupancy` records: for each configured target, a service seen from
 * its server side or an endpoint seen from its callers, the estimated
 * utilization of the tiers behind it (occupancy_fit.h), per interval and
 * per window, from what the kernel keeps for the targets only
 * (bpf/tcp/tcp_load.h): their response times, by the number in progress at
 * arrival too, and the sequence of their arrivals and departures. */
#ifndef KMON_OCCUPANCY_H
#define KMON_OCCUPANCY_H

#include <stddef.h>
#include <stdint.h>

struct kmond;
struct record;
struct tcp_cfg;
struct occupancy;
struct provider;

/* The kernel's per-target maps (bpf/tcp/tcp_load.bpf.h). */
struct occupancy_maps {
	int targets, data, steps_left;
};

struct occupancy *occupancy__new(void);
void occupancy__free(struct occupancy *o); /* NULL-safe */
/* Takes the targets of the config and makes their kernel entries (the
 * services' ids from p), removing those of targets no longer there; a
 * target kept keeps its window. */
int occupancy__configure(struct occupancy *o, const struct tcp_cfg *tc,
			 struct provider *p, const struct occupancy_maps *m);
/* A tcp_load_step from the load_steps ringbuf (ring_buffer_sample_fn). */
int occupancy__step(void *o, void *data, size_t size);
/* Emits this interval's records (and the windows that close now), from
 * the kernel's sums, after the steps are drained. */
void occupancy__report(struct occupancy *o, const struct occupancy_maps *m,
		       struct kmond *k, struct record *rec, uint64_t ts);

#endif
