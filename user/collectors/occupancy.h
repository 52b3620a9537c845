/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `occupancy` records: for each configured target service, the
 * estimated utilization of the tiers behind it (occupancy_fit.h), from
 * the histogram of its response times, per interval and per window. */
#ifndef KMON_OCCUPANCY_H
#define KMON_OCCUPANCY_H

#include <stdint.h>

#include "lib/histogram.h"

struct kmond;
struct record;
struct tcp_cfg;
struct occupancy;
struct provider;

struct occupancy *occupancy__new(void);
void occupancy__free(struct occupancy *o); /* NULL-safe */
/* Takes the targets of the config; a target kept keeps its window. */
int occupancy__configure(struct occupancy *o, const struct tcp_cfg *tc);
/* Response times of service this interval (one call per topology edge). */
void occupancy__add(struct occupancy *o, const char *service,
		    const struct hist *h);
/* Adds this interval's response times by the number in progress at
 * arrival from the kernel's load_given_n map (fd), making the targets'
 * entries there. */
void occupancy__read_given_n(struct occupancy *o, int fd,
			     struct provider *p);
/* Emits this interval's records (and the windows that close now). */
void occupancy__report(struct occupancy *o, struct kmond *k,
		       struct record *rec, uint64_t ts);

#endif
