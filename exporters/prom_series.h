/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The Prometheus exporter's state: metric families, their series (one per
 * label set) and the text exposition format (version 0.0.4) they render to.
 *
 * Every value is an integer: counts, bytes, or nanoseconds that render as
 * seconds (exact decimals, no floating point on the way). Counters only
 * ever grow; a series not updated for `expire` goes away, and past
 * `max_series` new series are refused and counted. Single-threaded: the
 * HTTP side only ever sees rendered text. */
#ifndef KMON_PROM_SERIES_H
#define KMON_PROM_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

/* Histogram bounds (le) are fixed for every histogram: kernel bucket
 * edges next to round values, so each log-linear bucket of histogram.h
 * falls inside exactly one of them (see prom_le_ns). */
#define PROM_NLE 17

struct prom_family {
	const char *name;
	const char *help;
	enum prom_type type;
	bool ns; /* values are nanoseconds, shown as seconds */
	/* kmond's own health: exempt from max_series and expiry */
	bool own;
};

struct prom_series;
struct prom_table;

/* The le bounds in ns, inclusive; the last one is followed by +Inf. */
extern const uint64_t prom_le_ns[PROM_NLE];

/* expire_ns 0: series never expire. */
struct prom_table *prom_table__new(uint64_t expire_ns, uint64_t max_series);
void prom_table__free(struct prom_table *t); /* NULL-safe */
void prom_table__set_limits(struct prom_table *t, uint64_t expire_ns,
			    uint64_t max_series);

/* The series of fam with these labels ("a=\"x\",b=\"y\"", escaped, as
 * prom_labels builds them), made when new; NULL when the table is full
 * (counted in prom_table__dropped). now_ns marks it as updated. */
struct prom_series *prom_table__get(struct prom_table *t,
				    const struct prom_family *fam,
				    const char *labels, uint64_t now_ns);

void prom_series__add(struct prom_series *s, uint64_t v); /* counters */
void prom_series__set(struct prom_series *s, uint64_t v); /* gauges */
/* A counter fed a cumulative figure that may restart from zero (a
 * collector started again): grows by the increase since the last figure,
 * or by the whole figure after a restart. */
void prom_series__add_cumulative(struct prom_series *s, uint64_t total);
/* Histograms: count observations in the kernel bucket whose low bound is
 * low_ns (histogram.h layout); the sum adds its midpoint. */
void prom_series__observe_bucket(struct prom_series *s, uint64_t low_ns,
				 uint64_t count);
uint64_t prom_series__value(const struct prom_series *s);

/* Drops the series not updated for expire_ns before now_ns. */
void prom_table__expire(struct prom_table *t, uint64_t now_ns);
size_t prom_table__count(const struct prom_table *t);
uint64_t prom_table__dropped(const struct prom_table *t);
/* Appends the text exposition of every family with series, in the order
 * families were first used. */
void prom_table__render(struct prom_table *t, struct strbuf *out);

/* Label building: appends name="value" (value escaped as the format
 * wants: \\, \" and \n; NUL bytes dropped), with a comma when needed. */
void prom_label(struct strbuf *sb, const char *name, const char *value,
		size_t len);
/* ns as exact decimal seconds: 1500000 -> "0.0015". */
void prom_add_seconds(struct strbuf *sb, uint64_t ns);

#endif
