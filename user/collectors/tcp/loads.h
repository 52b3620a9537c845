/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `load` records: the measured load of each monitored server, and of
 * each endpoint monitored callers call, per interval, from the kernel's
 * accumulators (bpf/tcp/tcp_load.h). */
#ifndef KMON_LOADS_H
#define KMON_LOADS_H

#include <stdbool.h>
#include <stdint.h>

struct kmond;
struct record;
struct tcp_loads;

/* The maps of one loaded tcp object (bpf/tcp/tcp_load.h). */
struct tcp_load_maps {
	int loads, slots, free, epoch;
};

struct tcp_loads *tcp_loads__new(void);
void tcp_loads__free(struct tcp_loads *l); /* NULL-safe */
/* Makes every slot of the accumulators free (a loaded object, before its
 * programs run). Returns 0 or -errno. */
int tcp_loads__init(const struct tcp_load_maps *m);
/* Slots found with fewer than no requests in progress (their sums not
 * whole: a start lost, or an end counted twice), not reported but
 * forgotten; since start. */
uint64_t tcp_loads__broken(const struct tcp_loads *l);
/* A request of the load in slot (tcp_load.h) whose outcome user space
 * decided (struct tcp_outcome_late): added at the next report. */
void tcp_loads__outcome(struct tcp_loads *l, uint32_t slot, bool error);
/* Emits one record per server, and per endpoint called, with requests in
 * progress or moving this interval. A record's ts is the end of its
 * interval, the moment its accumulators were read (monotonic ns plus
 * realtime_offset): the report can begin seconds before that on a busy
 * machine, and the interval must be the one its figures are of. */
void tcp_loads__report(struct tcp_loads *l, const struct tcp_load_maps *m,
		       struct kmond *k, struct record *rec,
		       uint64_t realtime_offset);

/* What the kernel's accumulators say at monotonic time t (ns): the
 * integral of requests in progress and the busy time, from the signed
 * sums (see bpf/tcp/tcp_load.h). Exposed for the unit test. */
uint64_t tcp_load__area(uint64_t area, uint64_t in_progress, uint64_t t);
uint64_t tcp_load__busy(uint64_t busy, uint64_t in_progress, uint64_t t);

#endif
