/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The `stats` record: kmond's own health, every interval. */
#ifndef KMON_STATS_H
#define KMON_STATS_H

#include <stdint.h>

#include "collectors/collector.h"

struct kmond;
struct record;

struct self_usage {
	uint64_t cpu_ns; /* user + system CPU time so far */
	uint64_t rss; /* resident set, bytes */
	uint64_t rss_peak;
};

void self_usage(struct self_usage *u);
/* Seconds since this process was exec'd (10 ms steps: /proc's start
 * time), for the start-up's figures. */
double self_age_s(void);

struct collector_report {
	const char *name;
	const char *attach; /* attach method of its first hook, or an error */
	int running;
	struct collector_stats st;
	/* its optional hooks (features) the kernel refused: bit h for
	 * ops->hooks[h] */
	uint64_t features_off;
	/* its collector_ops and state, for stats_record (NULL: none) */
	const struct collector_ops *ops;
	void *state;
};

struct reload_counts {
	uint64_t reloads; /* SIGHUPs whose config was taken */
	uint64_t failures; /* refused, or taken but not applied everywhere */
};

/* Builds the stats record from everything kmond counts. cpu is the
 * share of one core used since the previous stats record. */
void stats__record(struct record *r, struct kmond *k,
		   const struct reload_counts *reloads, uint64_t ts, double cpu,
		   const struct self_usage *u,
		   const struct collector_report *reports, int nreports);

#endif
