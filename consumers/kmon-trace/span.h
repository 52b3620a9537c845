/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One span: a tcp record of kmond (docs/records.md, "tcp"), one request/response
 * exchange seen from one end, with the ids kmond gives it: `id` (16 hex),
 * `trace` (32 hex) and, on client calls made while serving a request,
 * `parent` (that request's id) and `link`. */
#ifndef KMON_TRACE_SPAN_H
#define KMON_TRACE_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/hash.h"
#include "lib/json_scan.h"

struct trace;

struct trace_id {
	uint64_t hi, lo;
};

static inline bool trace_id__eq(struct trace_id a, struct trace_id b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* A trace id hashed to a table key: two rounds of mix64, not a hash of
 * 16 bytes one at a time (tables of traces are looked up several times a
 * span). The halves go in with different constants: kmond makes the
 * high half of a root's trace id as mix64 of its low half
 * (tcp_links__trace), so mix64(hi ^ mix64(lo)) was 0 for every one. */
static inline uint64_t trace_id__key(struct trace_id id)
{
	return mix64(id.lo ^ mix64(id.hi ^ 0x9e3779b97f4a7c15ULL));
}

/* Whether the request failed, by the protocol's meaning: kmond's `error`,
 * taken as written, never worked out again here. */
enum span_outcome {
	SPAN_OUTCOME_UNKNOWN, /* no `error`: kmond could not tell */
	SPAN_OUTCOME_OK,
	SPAN_OUTCOME_ERROR,
};

struct span {
	uint64_t id;
	uint64_t parent; /* 0: none */
	struct trace_id trace_id; /* the record's own trace */
	uint64_t start_ns, end_ns; /* unix epoch */
	uint64_t req_bytes, resp_bytes;
	uint32_t req_seq, resp_seq;
	bool has_seq; /* req_seq and resp_seq */
	bool client;
	bool ipv6;
	/* Cross-node join (traces.h): a server span under the client call
	 * it answered, a client call with the server span that answered it. */
	bool joined;
	bool ambiguous; /* shares its join key with another end: never joined */
	uint16_t lport, rport;
	uint32_t pid, tid;
	/* Request outcome (docs/design/outcomes.md). */
	enum span_outcome outcome;
	bool status_is_number; /* `status` was a JSON number */
	int64_t status_number;
	bool has_grpc_status;
	uint32_t grpc_status;
	/* NULL when the record has none; in the span's own allocation
	 * (span__new). status: as written, a number in decimal. */
	char *node, *service, *comm, *laddr, *raddr, *protocol, *dst, *link;
	char *status, *method, *route;
	/* kmon-trace --fleet (fleet.h): the record as read, to be sent on
	 * if its trace moves to another member, and the partition of
	 * <prefix><group>.span it came from and the trace it was keyed by
	 * there (its own, or the one it was sent on to). NULL and -1
	 * otherwise. */
	char *raw;
	size_t raw_len;
	int32_t partition;
	struct trace_id routed;
	struct trace *trace; /* traces.c's */
};

/* Joins the two ends of an exchange (traces.h): the sequence number and
 * the client's port, 48 bits. */
static inline uint64_t span__join_key(const struct span *s)
{
	return (uint64_t)s->req_seq << 16 | (s->client ? s->lport : s->rport);
}

/* The members of a record kmon-trace reads, in the order of
 * span.c's names. */
enum span_field {
	SPAN_KIND,
	SPAN_TS,
	SPAN_LATENCY_NS,
	SPAN_ID,
	SPAN_TRACE,
	SPAN_PARENT,
	SPAN_NODE,
	SPAN_SERVICE,
	SPAN_COMM,
	SPAN_LADDR,
	SPAN_RADDR,
	SPAN_PROTOCOL,
	SPAN_DST,
	SPAN_LINK,
	SPAN_METHOD,
	SPAN_ROUTE,
	SPAN_SIDE,
	SPAN_FAMILY,
	SPAN_LPORT,
	SPAN_RPORT,
	SPAN_REQ_SEQ,
	SPAN_RESP_SEQ,
	SPAN_PID,
	SPAN_TID,
	SPAN_REQ_BYTES,
	SPAN_RESP_BYTES,
	SPAN_ERROR,
	SPAN_STATUS,
	SPAN_GRPC_STATUS,
	SPAN_FIELDS
};

/* One record read in a single pass (json_scan.h): its members as
 * written, pointing into the text, nothing allocated. */
struct span_record {
	struct json_scan_value v[SPAN_FIELDS];
};

enum span_kind {
	SPAN_RECORD_TCP,
	SPAN_RECORD_OTHER, /* a record of another kind */
	SPAN_RECORD_NO_KIND, /* a JSON object without a string kind */
	SPAN_RECORD_NOT_JSON, /* the reason in *err */
};

/* Reads the members of text[0..len) into *r. */
enum span_kind span__scan(const char *text, size_t len, struct span_record *r,
			  struct json_error *err);
/* Checks a tcp record's members into *s: every field but the strings.
 * Returns false with the reason in err for a record that is not a valid
 * traceable tcp record. */
bool span__check(const struct span_record *r, struct span *s, char *err,
		 size_t errlen);
/* A new span: checked's fields, r's strings, and a copy of raw (NULL:
 * none) in one allocation. */
struct span *span__new(const struct span *checked, const struct span_record *r,
		       const char *raw, size_t raw_len);
/* The three above, for one record read as a tcp record whatever its
 * kind: NULL with the reason in err. */
struct span *span__read(const char *text, size_t len, char *err, size_t errlen);
void span__free(struct span *s); /* NULL-safe */

/* Hex as OTLP JSON writes ids: 16 and 32 lowercase digits. */
void span__hex64(uint64_t v, char out[17]);
void span__hex128(struct trace_id t, char out[33]);
/* 32 hex digits, not all zeroes, into *out. */
bool span__parse_trace_id(const char *s, size_t len, struct trace_id *out);

#endif
