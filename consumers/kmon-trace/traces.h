/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Open traces: spans from every node gathered by trace, the two ends of
 * each cross-node exchange joined, and each trace handed out whole once
 * no span has come for it for a quiet time.
 *
 * The join (docs/consumers.md, "kmon-trace"): a server span on node B and a client
 * span on node A are the same exchange when the server's (req_seq,
 * rport) equals the client's (req_seq, lport) and their resp_seq agree:
 * TCP sequence numbers and the client's port, never addresses (a
 * destination NAT rewrites the server's). The server span then hangs
 * under the client span (parent = the client's id), and the server's
 * trace, every span of it, becomes part of the client's trace. Never a
 * guess: two ends of one side with the same key are both left unjoined
 * (counted as ambiguous), and a server span whose own parent is another
 * span is not moved (a conflict). A server end that comes after its
 * call's trace was written still joins it, under the call's trace id
 * (late_ns, traces.c). The other way round, a quiet trace with a request
 * from another monitored host (an address some span has as its local
 * one) whose call has not come is held, up to late_ns after its first
 * span, for that call. */
#ifndef KMON_TRACE_TRACES_H
#define KMON_TRACE_TRACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "span.h"

/* A finished trace, as handed to the writer: spans in arrival order,
 * each span's parent already set by the join. */
struct trace_view {
	struct trace_id id; /* the root's trace id, for every span */
	struct span *const *spans;
	size_t n;
	bool evicted; /* written early: the bounds were reached */
};

typedef void (*trace_write_fn)(const struct trace_view *t, void *ctx);

struct trace_counts {
	uint64_t spans; /* added */
	uint64_t joined; /* exchanges whose two ends were joined */
	uint64_t late_joined; /* of which after the call was written */
	uint64_t ambiguous; /* ends sharing their key with another */
	uint64_t conflicts; /* ends matched but not moved */
	uint64_t mismatched; /* key matched, resp_seq did not */
	uint64_t unmatched_client; /* calls whose server end never came */
	uint64_t unmatched_server; /* requests with no known caller */
	uint64_t traces_written, spans_written;
	uint64_t evicted; /* traces written early to stay in bounds */
	uint64_t held; /* kept past the quiet time for a caller */
	uint64_t open_traces, open_spans;
};

struct traces;

/* max_traces, max_spans: the bounds of what is kept open; past them the
 * least recently active trace is written early (counted as evicted).
 * late_ns: how long a written call still takes its server end (0: not
 * at all; at most 65536 such calls are remembered). */
struct traces *traces__new(size_t max_traces, size_t max_spans,
			   uint64_t late_ns, trace_write_fn write, void *ctx);
void traces__free(struct traces *t); /* NULL-safe; writes nothing */

/* Takes s; now_ns is the arrival time (any monotonic clock). */
void traces__add(struct traces *t, struct span *s, uint64_t now_ns);
/* Writes every trace with no span for quiet_ns (but those held). */
void traces__expire(struct traces *t, uint64_t now_ns, uint64_t quiet_ns);
/* Writes every open trace (end of input). */
void traces__flush(struct traces *t);

/* Whether a span with this id is open, or among the last max written
 * after traces__remember_written(t, max): a message read twice. */
bool traces__has_span(const struct traces *t, uint64_t id);
void traces__remember_written(struct traces *t, size_t max);
/* Takes traces out, unwritten, for another kmon-trace (fleet.h): each
 * span goes to fn, which then owns it. */
typedef void (*trace_take_fn)(struct span *s, void *ctx);
/* The open trace that trace id answers to, unless it was merged into
 * another trace (its id differs): then nothing is taken and *merged_into
 * is that trace's id. Returns whether a trace was taken. */
bool traces__take(struct traces *t, struct trace_id id,
		  struct trace_id *merged_into, trace_take_fn fn, void *ctx);
/* Every open trace with a span that came from a partition for which
 * revoked(partition, ctx) is true. Returns how many. */
size_t traces__take_partitions(struct traces *t,
			       bool (*revoked)(int32_t partition, void *ctx),
			       trace_take_fn fn, void *ctx);

const struct trace_counts *traces__counts(const struct traces *t);

#endif
