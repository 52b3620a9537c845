// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One topology record read from its JSON text (graph.h, topo__parse):
 * in one pass for the members it needs, with no tree (json_scan.h). A
 * tree of every member was half of a kmon-topo member's CPU. */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "lib/json_scan.h"

enum field {
	F_KIND,
	F_NODE,
	F_SRC,
	F_DST,
	F_SRC_ADDR,
	F_DST_ADDR,
	F_SIDE,
	F_PROTOCOL,
	F_TS,
	F_REQUESTS,
	F_BYTES,
	F_P50,
	F_P95,
	F_P99,
	F_OUTCOMES,
	F_ERRORS,
	F_STATUS, /* status_1xx, then the other classes in order */
	F_N = F_STATUS + TOPO_STATUS_CLASSES,
};

static const char *const field_names[F_N] = {
	[F_KIND] = "kind",
	[F_NODE] = "node",
	[F_SRC] = "src",
	[F_DST] = "dst",
	[F_SRC_ADDR] = "src_addr",
	[F_DST_ADDR] = "dst_addr",
	[F_SIDE] = "side",
	[F_PROTOCOL] = "protocol",
	[F_TS] = "ts",
	[F_REQUESTS] = "requests",
	[F_BYTES] = "bytes",
	[F_P50] = "latency_p50_ns",
	[F_P95] = "latency_p95_ns",
	[F_P99] = "latency_p99_ns",
	[F_OUTCOMES] = "outcomes",
	[F_ERRORS] = "errors",
	[F_STATUS] = "status_1xx",
	[F_STATUS + 1] = "status_2xx",
	[F_STATUS + 2] = "status_3xx",
	[F_STATUS + 3] = "status_4xx",
	[F_STATUS + 4] = "status_5xx",
};

_Static_assert(TOPO_STATUS_CLASSES == 5, "a name per status class");

/* A record's members, and where its strings are decoded to. */
struct reader {
	struct json_scan_value v[F_N];
	char *strings; /* the next free byte */
	char *err;
	size_t errlen;
};

static bool present(const struct reader *rd, enum field f)
{
	return rd->v[f].type != JSON_SCAN_ABSENT;
}

static int opt_u64(struct reader *rd, enum field f, uint64_t *out)
{
	const struct json_scan_value *v = &rd->v[f];

	*out = 0;
	if (v->type == JSON_SCAN_ABSENT)
		return 0;
	if (!json_scan__u64(v, out)) {
		snprintf(rd->err, rd->errlen,
			 "%s: expected an unsigned integer, got %s",
			 field_names[f], json_scan__type_name(v));
		return -1;
	}
	return 0;
}

static int opt_str(struct reader *rd, enum field f, const char **out)
{
	const struct json_scan_value *v = &rd->v[f];
	size_t len;

	*out = NULL;
	if (v->type == JSON_SCAN_ABSENT || v->type == JSON_SCAN_NULL)
		return 0;
	if (v->type != JSON_SCAN_STRING || !v->len) {
		snprintf(rd->err, rd->errlen,
			 "%s: expected a non-empty string, got %s",
			 field_names[f],
			 v->type == JSON_SCAN_STRING ? "\"\"" :
						       json_scan__type_name(v));
		return -1;
	}
	len = json_scan__string(v, rd->strings);
	*out = rd->strings;
	rd->strings += len + 1;
	return 0;
}

static int req_str(struct reader *rd, enum field f, const char **out)
{
	if (opt_str(rd, f, out))
		return -1;
	if (!*out) {
		snprintf(rd->err, rd->errlen, "%s: missing", field_names[f]);
		return -1;
	}
	return 0;
}

/* outcomes and errors come together, or not at all (a kmond before
 * them); status classes only on HTTP edges, and only when not 0. */
static int read_outcomes(struct reader *rd, struct topo_report *r)
{
	bool has_errors = present(rd, F_ERRORS);

	r->has_outcomes = present(rd, F_OUTCOMES);
	if (r->has_outcomes != has_errors) {
		snprintf(rd->err, rd->errlen,
			 "%s: missing (outcomes and errors come together)",
			 has_errors ? "outcomes" : "errors");
		return -1;
	}
	if (opt_u64(rd, F_OUTCOMES, &r->outcomes) ||
	    opt_u64(rd, F_ERRORS, &r->errors))
		return -1;
	for (int c = 0; c < TOPO_STATUS_CLASSES; c++)
		if (opt_u64(rd, F_STATUS + c, &r->status[c]))
			return -1;
	return 0;
}

static int read_side(struct reader *rd, const char *side, struct topo_report *r)
{
	if (!side || strcmp(side, "server") == 0) {
		r->side = TOPO_SERVER;
	} else if (strcmp(side, "client") == 0) {
		r->side = TOPO_CLIENT;
	} else {
		snprintf(rd->err, rd->errlen,
			 "side: \"%s\", expected server or client", side);
		return -1;
	}
	return 0;
}

int topo__parse(const char *json, size_t len, struct topo_report *r,
		char *strings, char *err, size_t errlen)
{
	static _Thread_local struct json_scan_keys keys;
	struct reader rd = { .strings = strings, .err = err, .errlen = errlen };
	struct json_error jerr;
	const char *kind, *side;

	memset(r, 0, sizeof(*r));
	if (!keys.n)
		json_scan__keys(&keys, field_names, F_N);
	if (!json_scan(json, len, &keys, rd.v, &jerr)) {
		snprintf(err, errlen, "col %zu: %s", jerr.col, jerr.msg);
		return -1;
	}
	if (req_str(&rd, F_KIND, &kind))
		return -1;
	if (strcmp(kind, "topology")) {
		snprintf(err, errlen, "kind: \"%s\", not topology", kind);
		return -1;
	}
	if (req_str(&rd, F_NODE, &r->node) || req_str(&rd, F_SRC, &r->src) ||
	    req_str(&rd, F_DST, &r->dst) ||
	    opt_str(&rd, F_SRC_ADDR, &r->src_addr) ||
	    opt_str(&rd, F_DST_ADDR, &r->dst_addr) ||
	    opt_str(&rd, F_SIDE, &side) ||
	    opt_str(&rd, F_PROTOCOL, &r->protocol))
		return -1;
	if (!present(&rd, F_TS) || !present(&rd, F_REQUESTS)) {
		snprintf(err, errlen, "%s: missing",
			 present(&rd, F_TS) ? "requests" : "ts");
		return -1;
	}
	if (opt_u64(&rd, F_TS, &r->ts) ||
	    opt_u64(&rd, F_REQUESTS, &r->requests) ||
	    opt_u64(&rd, F_BYTES, &r->bytes) || opt_u64(&rd, F_P50, &r->p50) ||
	    opt_u64(&rd, F_P95, &r->p95) || opt_u64(&rd, F_P99, &r->p99) ||
	    read_outcomes(&rd, r))
		return -1;
	return read_side(&rd, side, r);
}
