/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The interface every collector implements: one indicator, its own BPF
 * object, loaded once and steered through control maps afterwards. */
#ifndef KMON_COLLECTOR_H
#define KMON_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "loader/probe.h"

struct exporter;
struct provider;
struct record;
struct rings;

/* What every collector works with; the daemon owns it. */
struct kmond {
	struct config cfg; /* the running configuration */
	struct provider *provider; /* names processes */
	struct exporter *exporter; /* where records go */
	struct rings *rings; /* the ringbufs the main loop drains */
	/* The collect before collectors stop (exit, or a reload that turns
	 * one off): nothing left in the kernel is read after it. */
	bool last_collect;
};

struct collector_stats {
	uint64_t events; /* events the kernel side saw */
	uint64_t lost; /* events lost in the kernel (maps full, ringbuf) */
	/* runs of its programs the kernel skipped (loader/misses.h), also
	 * in lost unless lost counts what they lose another way */
	uint64_t missed;
};

struct collector_ops {
	const char *name;
	const struct hook *hooks;
	int nhooks;
	/* offsetof(struct config, <its section>), which starts with its
	 * collector_switch. */
	size_t cfg_offset;
	/* Whether cfg needs hook h (--check judges only those); NULL: every
	 * hook is needed. */
	bool (*uses_hook)(const struct config *cfg, int h);
	/* open -> select attach methods -> load -> fill control maps ->
	 * attach. Returns 0 and *state, or -errno (logged; a load refused
	 * only at debug level: the daemon starts it again without the
	 * refused program, and says so if that does not help). */
	int (*start)(struct kmond *k, void **state);
	/* A reload changed the config: rewrite control maps only. */
	int (*apply)(void *state, const struct config *cfg);
	/* Every interval (and once more at exit): emit records. */
	void (*collect)(void *state, struct kmond *k, uint64_t ts_ns);
	void (*stats)(void *state, struct collector_stats *st);
	/* Optional: more fields for its object of the stats record. */
	void (*stats_record)(void *state, struct record *r);
	void (*stop)(void *state); /* NULL-safe: detach, destroy */
};

/* Whether cfg switches the collector on, and whether it is required. */
static inline const struct collector_switch *
collector__switch(const struct collector_ops *ops, const struct config *cfg)
{
	return (const struct collector_switch *)((const char *)cfg +
						 ops->cfg_offset);
}

/* Every collector kmond has, NULL-terminated. */
extern const struct collector_ops *const collectors[];

#endif
