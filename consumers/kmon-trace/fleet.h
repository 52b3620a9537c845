/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-trace --fleet: one member of a group of any size, in two stages
 * joined through Kafka (docs/consumers.md, "A group of members"):
 *
 *  1. group GROUP reads <prefix>tcp, which kmond keys by the exchange
 *     (req_seq), with <prefix><group>.exchange (as many partitions: the
 *     range assignor gives partition p of both to one member). The two
 *     ends of each exchange meet here (exchanges.h), and where the
 *     server's trace is not its caller's, a move (from the server's
 *     trace to the caller's, or to where this member sent the caller's
 *     trace) goes to <prefix><group>.span, keyed by the server's trace.
 *     Every record goes on to <prefix><group>.span keyed by its own
 *     trace, or by where this member sent its trace (its moves, as
 *     forwards.h resolves them).
 *  2. group GROUP.traces reads <prefix><group>.span: spans gather by the
 *     trace they were sent to, in traces.h as in one kmon-trace. A move
 *     takes the trace out and sends its spans on, keyed by the caller's
 *     trace (or where it went from here), where traces.h joins them
 *     under the call; spans of that trace that come later follow
 *     (forwards.h). A span sent on to a partition this member reads is
 *     kept, as if read back. A trace that moved nowhere is written.
 *
 * A rebalance loses no state: a member giving up partitions first sends
 * what it holds for them (ends still waiting, open traces, forwards) to
 * those same partitions, where the next owner reads it, then commits.
 * Brokers refuse commits while the group rebalances, so it also marks
 * how far it read each partition of <prefix>tcp, and the next owner
 * starts there; what stage 2 reads twice it drops (traces.h knows the
 * spans it holds and the last ones it wrote).
 *
 * Stage 1 runs in a thread of its own from fleet__open to fleet__leave;
 * stage 2 in the caller's, with traces (fleet__poll, then the caller's
 * traces__expire). The read callback runs in stage 1's thread. */
#ifndef KMON_TRACE_FLEET_H
#define KMON_TRACE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"
#include "traces.h"

struct strbuf;

/* Where a message was read, formatted only when a message is refused:
 * "TOPIC [P] offset N". */
struct fleet_where {
	const char *topic;
	int32_t partition;
	int64_t offset;
};

void fleet_where__format(const struct fleet_where *w, char *buf, size_t size);

/* main's reading of one record of <prefix>tcp, counted there (in stage
 * 1's thread: thread-safe counts): true for a
 * tcp record, its members in *r and its fields checked into *s; false
 * for a record it rejected (saying where) or skipped. */
typedef bool (*fleet_read_fn)(const char *text, size_t len,
			      struct span_record *r, struct span *s,
			      const struct fleet_where *w, void *ctx);

struct fleet_opts {
	const struct source_opts *src; /* brokers, prefix, group, -X */
	uint64_t late_ns;
	size_t max_pending; /* ends waiting for their other end */
};

struct fleet;

/* NULL with the reason printed: the topics are missing, or their
 * partitions differ (a usage problem: exit 2). */
struct fleet *fleet__open(const struct fleet_opts *o, struct traces *traces,
			  fleet_read_fn read, void *ctx);
/* Stage 2: hands out what arrives within timeout_ms. Returns 0, -1 on
 * failure. */
int fleet__poll(struct fleet *f, int timeout_ms);
/* The clock of stage 2's windows (--quiet, --late) now: the stream's
 * time while either stage is behind it (reader_clock.h). */
uint64_t fleet__clock(struct fleet *f);
/* Stage 2's forwards that waited late_ns go (stage 1 expires its own). */
void fleet__expire(struct fleet *f, uint64_t now_ns);
/* False while stage 2 has read what it could not commit: a trace
 * written then could be read again by the next owner, and written
 * twice. */
bool fleet__may_write(const struct fleet *f);
/* Stops stage 1's thread, then leaves both groups, handing over what is
 * held. */
void fleet__leave(struct fleet *f);
void fleet__close(struct fleet *f); /* leaves too; NULL-safe */
const char *fleet__name(const struct fleet *f);
/* The counts, as JSON fields after others: ,"fleet":{...} */
void fleet__counts(struct fleet *f, struct strbuf *sb);

#endif
