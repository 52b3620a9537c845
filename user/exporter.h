/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The exporter: hands every finished record to every configured sink and
 * counts what could not be delivered. */
#ifndef KMON_EXPORTER_H
#define KMON_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "sink.h"

struct config;
struct exporter;
struct record;

struct exporter_stats {
	uint64_t records; /* records handed to the exporter */
	struct sink_stats sinks; /* summed over sinks */
};

/* Opens every sink of cfg. Returns NULL with a message in err. */
struct exporter *exporter__new(const struct config *cfg, char *err,
			       size_t errlen);
void exporter__send(struct exporter *e, const struct record *r);
void exporter__flush(struct exporter *e, int timeout_ms);
/* SIGHUP: reopen file sinks (log rotation). */
void exporter__reopen(struct exporter *e);
void exporter__stats(struct exporter *e, struct exporter_stats *st);
void exporter__free(struct exporter *e); /* NULL-safe; flushes first */
/* A reload replaced old by e: e's stats go on from old's totals. Call
 * after the final flush of old, before freeing it. */
void exporter__inherit(struct exporter *e, struct exporter *old);
/* Whether two configs describe the same sinks. */
int exporter__same_sinks(const struct config *a, const struct config *b);

#endif
