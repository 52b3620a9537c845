/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Records -> Prometheus series: which record kind and field feeds which
 * kmon_* metric (docs/prometheus.md's table). Records arrive as kmond encoded
 * them; each is parsed once with json_parse.h. */
#ifndef KMON_PROM_METRICS_H
#define KMON_PROM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/prom_series.h"

/* Kinds the exporter reads; anything else (tcp: one per request) is
 * skipped before any parsing. */
bool prom_metrics__wants(const char *kind);
/* Adds one record of kind to t. Returns 0, or -1 when it is not valid
 * JSON or lacks a field its kind needs (nothing is added then). */
int prom_metrics__ingest(struct prom_table *t, const char *kind,
			 const char *json, size_t len, uint64_t now_ns);
/* What only the exporter knows: kmond's CPU time (cumulative, ns) and the
 * table's own size and refusals. */
void prom_metrics__self(struct prom_table *t, const char *node, uint64_t cpu_ns,
			uint64_t now_ns);

#endif
