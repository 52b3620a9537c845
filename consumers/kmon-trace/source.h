/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where records come from: JSON lines from a file or stdin, or the
 * messages of <prefix>tcp read as one member of a Kafka consumer group. */
#ifndef KMON_TRACE_SOURCE_H
#define KMON_TRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOURCE_MAX_PROPS 64

struct source_opts {
	const char *input; /* a file, "-" stdin; NULL: Kafka */
	const char *brokers, *prefix, *group;
	const char *props[SOURCE_MAX_PROPS][2];
	int nprops;
};

/* One record: the text (not NUL-terminated; NULL for a line longer than
 * the reader keeps) and where it came from ("FILE:LINE", "TOPIC [P]
 * offset N"). Returns the record's own time (unix epoch ns), 0 for none:
 * the clock of a Kafka reader (source__clock). */
typedef uint64_t (*source_record_fn)(const char *text, size_t len,
				     const char *where, void *ctx);

struct source;

/* NULL with the reason printed (a usage problem: exit 2). */
struct source *source__open(const struct source_opts *o);
void source__close(struct source *s); /* NULL-safe */
/* Hands out what arrives within timeout_ms. Returns 0, or 1 at the end
 * of a file (never for Kafka), -1 on a read error (printed). */
int source__poll(struct source *s, int timeout_ms, source_record_fn fn,
		 void *ctx);
/* The clock a window on what was read runs on, in nanoseconds: the
 * monotonic clock for a file or a pipe; for Kafka, the records' own time
 * while the reader is behind (consumers/common/reader_clock.h). */
uint64_t source__clock(struct source *s);
/* What the source is, for the start-up line. */
const char *source__name(const struct source *s);
/* A regular file (-i FILE, or stdin redirected from one): it is read
 * at disk speed, so how long a trace has been quiet says nothing. */
bool source__regular_file(const struct source *s);

#endif
