/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-trace --fleet, stage 1 (docs/consumers.md, "A group of members"):
 * the two ends of each exchange, found among the records of the
 * partitions of <prefix>tcp this member reads. kmond keys tcp records by
 * their req_seq, so both ends of an exchange come to one member.
 *
 * Ends are matched as traces.h matches them (req_seq, the client's port,
 * resp_seq; two ends of one side under one key are ambiguous and left
 * alone), but only to say where a trace goes: when the server end's trace
 * is not its caller's, the server's trace must move to the caller's
 * (a move, handed to the caller). The spans themselves go on at once,
 * keyed by their own trace; only the ends still waiting for their other
 * end are kept here, a few dozen bytes each, for late_ns at most and
 * max_pending of them at most (the oldest go first, counted). */
#ifndef KMON_TRACE_EXCHANGES_H
#define KMON_TRACE_EXCHANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "span.h"

struct exchange_end {
	uint64_t key; /* req_seq << 16 | the client's port */
	struct trace_id trace; /* the record's own trace */
	uint32_t resp_seq;
	bool client;
	int32_t partition; /* of <prefix>tcp it was read from */
};

struct exchange_counts {
	uint64_t ends; /* added */
	uint64_t joined, moves; /* moves: of the joined, traces that differ */
	uint64_t ambiguous, mismatched;
	uint64_t repeated; /* an end already waiting, read again */
	uint64_t expired; /* waited late_ns for the other end */
	uint64_t evicted; /* went early: max_pending */
	uint64_t handed_over; /* to the next owner of their partition */
	uint64_t pending;
};

/* The server's trace from goes under the client's trace to. */
typedef void (*exchange_move_fn)(struct trace_id from, struct trace_id to,
				 void *ctx);
/* end: a const struct exchange_end * (aging.h hands items out so) */
typedef void (*exchange_end_fn)(const void *end, void *ctx);

struct exchanges;

struct exchanges *exchanges__new(size_t max_pending, uint64_t late_ns,
				 exchange_move_fn move, void *ctx);
void exchanges__free(struct exchanges *x); /* NULL-safe */
void exchanges__add(struct exchanges *x, const struct exchange_end *e,
		    uint64_t now_ns);
/* Forgets the ends that waited late_ns. */
void exchanges__expire(struct exchanges *x, uint64_t now_ns);
/* Every waiting end of a partition for which revoked(partition, ctx) is
 * true goes to fn and is forgotten here. Returns how many. */
size_t exchanges__hand_over(struct exchanges *x,
			    bool (*revoked)(int32_t partition, void *ctx),
			    exchange_end_fn fn, void *ctx);
const struct exchange_counts *exchanges__counts(const struct exchanges *x);

#endif
