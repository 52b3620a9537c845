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

struct json_value;
struct trace;

struct trace_id {
	uint64_t hi, lo;
};

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
	/* Owned copies; NULL when the record has none. status: as written,
	 * a number in decimal. */
	char *node, *service, *comm, *laddr, *raddr, *protocol, *dst, *link;
	char *status, *method, *route;
	struct trace *trace; /* traces.c's */
};

/* Reads one tcp record into a new span. Returns it, or NULL with the
 * reason in err for a record that is not a valid traceable tcp record. */
struct span *span__parse(const struct json_value *rec, char *err,
			 size_t errlen);
void span__free(struct span *s); /* NULL-safe */

/* Hex as OTLP JSON writes ids: 16 and 32 lowercase digits. */
void span__hex64(uint64_t v, char out[17]);
void span__hex128(struct trace_id t, char out[33]);

#endif
