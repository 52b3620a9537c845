/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The exporter: hands every finished record to every configured sink and
 * counts what could not be delivered. */
#ifndef KMON_EXPORTER_H
#define KMON_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/sink.h"

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
/* Reload: moves to the sinks of next. Sinks configured alike in both
 * keep running untouched (with whatever they queue); the others are
 * opened, or flushed (bounded by flush_ms) and closed. Returns 0, or -1
 * with err when a new sink cannot open: then nothing changed. */
int exporter__reconfigure(struct exporter *e, const struct config *cur,
			  const struct config *next, int flush_ms, char *err,
			  size_t errlen);

#endif
