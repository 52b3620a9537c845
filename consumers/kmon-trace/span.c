// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tcp records -> spans, each field checked: a span with a wrong id would
 * hang under the wrong parent, so a record that cannot be read exactly
 * is refused with the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "span.h"
#include "lib/array.h"
#include "lib/json_parse.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		goto fail;                          \
	} while (0)

/* Exactly n lowercase or uppercase hex digits (n <= 16) into *out. */
static bool parse_hex(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

/* A 16-hex id, not all zeroes (OTLP: an all-zero span id is invalid). */
static bool read_id(const struct json_value *v, uint64_t *out)
{
	const char *s = json__str(v);

	return s && strlen(s) == 16 && parse_hex(s, 16, out) && *out;
}

bool span__parse_trace_id(const char *s, size_t len, struct trace_id *out)
{
	return len == 32 && parse_hex(s, 16, &out->hi) &&
	       parse_hex(s + 16, 16, &out->lo) && (out->hi || out->lo);
}

static bool read_trace_id(const struct json_value *v, struct trace_id *out)
{
	const char *s = json__str(v);

	return s && span__parse_trace_id(s, strlen(s), out);
}

/* An optional string: NULL when absent or null; false when of another
 * type. */
static bool opt_str(const struct json_value *rec, const char *key, char **out)
{
	const struct json_value *v = json__get(rec, key);

	*out = NULL;
	if (!v || v->type == JSON_NULL)
		return true;
	if (v->type != JSON_STRING)
		return false;
	*out = xstrdup(v->str.s);
	return true;
}

/* An optional unsigned number at most max; *out 0 when absent or null. */
static bool opt_uint(const struct json_value *rec, const char *key,
		     uint64_t max, uint64_t *out, bool *present)
{
	const struct json_value *v = json__get(rec, key);

	*out = 0;
	*present = v && v->type != JSON_NULL;
	if (!*present)
		return true;
	return json__u64(v, out) && *out <= max;
}

/* `error`: true, false, or absent (or null) when kmond did not know. */
static bool read_outcome(const struct json_value *rec, enum span_outcome *out)
{
	const struct json_value *v = json__get(rec, "error");
	bool error;

	*out = SPAN_OUTCOME_UNKNOWN;
	if (!v || v->type == JSON_NULL)
		return true;
	if (!json__bool(v, &error))
		return false;
	*out = error ? SPAN_OUTCOME_ERROR : SPAN_OUTCOME_OK;
	return true;
}

/* `status`: a number for some protocols (HTTP's code, MySQL's error
 * number, ZooKeeper's negative err), a string for others (SQLSTATE,
 * Redis's error word, the DNS RCODE's name). */
static bool read_status(const struct json_value *rec, struct span *s)
{
	const struct json_value *v = json__get(rec, "status");
	char num[24];

	if (!v || v->type == JSON_NULL)
		return true;
	if (v->type == JSON_STRING) {
		s->status = xstrdup(v->str.s);
		return true;
	}
	if (!json__i64(v, &s->status_number))
		return false;
	s->status_is_number = true;
	snprintf(num, sizeof(num), "%lld", (long long)s->status_number);
	s->status = xstrdup(num);
	return true;
}

static const char *what(const struct json_value *rec, const char *key)
{
	return json__get(rec, key) ? "invalid" : "missing";
}

struct span *span__parse(const struct json_value *rec, char *err, size_t errlen)
{
	struct span *s = xcalloc(1, sizeof(*s));
	const struct json_value *v;
	uint64_t ts, latency, u;
	bool has, has2;
	const char *side, *family;
	static const char *const strs[] = { "node",  "service", "comm",
					    "laddr", "raddr",	"protocol",
					    "dst",   "link",	"method",
					    "route" };
	char **dsts[] = { &s->node,   &s->service,  &s->comm, &s->laddr,
			  &s->raddr,  &s->protocol, &s->dst,  &s->link,
			  &s->method, &s->route };
	size_t i;

	s->partition = -1;
	if (!json__u64(json__get(rec, "ts"), &ts))
		FAIL("ts: %s", what(rec, "ts"));
	if (!json__u64(json__get(rec, "latency_ns"), &latency) || latency > ts)
		FAIL("latency_ns: %s", what(rec, "latency_ns"));
	s->end_ns = ts; /* kmond stamps a request with its end */
	s->start_ns = ts - latency;
	if (!read_id(json__get(rec, "id"), &s->id))
		FAIL("id: %s (16 hex digits, not all zero)", what(rec, "id"));
	if (!read_trace_id(json__get(rec, "trace"), &s->trace_id))
		FAIL("trace: %s (32 hex digits, not all zero)",
		     what(rec, "trace"));
	v = json__get(rec, "parent");
	if (v && v->type != JSON_NULL && !read_id(v, &s->parent))
		FAIL("parent: invalid (16 hex digits, not all zero)");
	if (s->parent == s->id && s->parent)
		FAIL("parent: the span's own id");
	for (i = 0; i < ARRAY_SIZE(strs); i++)
		if (!opt_str(rec, strs[i], dsts[i]))
			FAIL("%s: expected a string", strs[i]);
	if (!s->node)
		FAIL("node: missing");
	side = json__str(json__get(rec, "side"));
	if (json__get(rec, "side") && !side)
		FAIL("side: expected a string");
	/* kmond before client-side records wrote server ones without it */
	if (side && strcmp(side, "client") == 0)
		s->client = true;
	else if (side && strcmp(side, "server") != 0)
		FAIL("side: \"%s\" is neither server nor client", side);
	family = json__str(json__get(rec, "family"));
	s->ipv6 = family && strcmp(family, "ipv6") == 0;
	if (!opt_uint(rec, "lport", 65535, &u, &has) || !has)
		FAIL("lport: %s", what(rec, "lport"));
	s->lport = u;
	if (!opt_uint(rec, "rport", 65535, &u, &has) || !has)
		FAIL("rport: %s", what(rec, "rport"));
	s->rport = u;
	if (!opt_uint(rec, "req_seq", UINT32_MAX, &u, &has))
		FAIL("req_seq: invalid");
	s->req_seq = u;
	if (!opt_uint(rec, "resp_seq", UINT32_MAX, &u, &has2))
		FAIL("resp_seq: invalid");
	s->resp_seq = u;
	if (has != has2)
		FAIL("%s: missing (req_seq and resp_seq come together)",
		     has ? "resp_seq" : "req_seq");
	/* Both zero: kmond did not know them (2^-64 by chance). */
	s->has_seq = has && (s->req_seq || s->resp_seq);
	if (!opt_uint(rec, "pid", UINT32_MAX, &u, &has))
		FAIL("pid: invalid");
	s->pid = u;
	if (!opt_uint(rec, "tid", UINT32_MAX, &u, &has))
		FAIL("tid: invalid");
	s->tid = u;
	if (!opt_uint(rec, "req_bytes", UINT64_MAX, &s->req_bytes, &has))
		FAIL("req_bytes: invalid");
	if (!opt_uint(rec, "resp_bytes", UINT64_MAX, &s->resp_bytes, &has))
		FAIL("resp_bytes: invalid");
	if (!read_outcome(rec, &s->outcome))
		FAIL("error: expected true or false");
	if (!read_status(rec, s))
		FAIL("status: expected an integer or a string");
	if (!opt_uint(rec, "grpc_status", UINT32_MAX, &u, &s->has_grpc_status))
		FAIL("grpc_status: invalid");
	s->grpc_status = u;
	return s;
fail:
	span__free(s);
	return NULL;
}

void span__free(struct span *s)
{
	if (!s)
		return;
	free(s->node);
	free(s->service);
	free(s->comm);
	free(s->laddr);
	free(s->raddr);
	free(s->protocol);
	free(s->dst);
	free(s->link);
	free(s->status);
	free(s->method);
	free(s->route);
	free(s->raw);
	free(s);
}

void span__hex64(uint64_t v, char out[17])
{
	strbuf__put_hex64(out, v)[0] = '\0';
}

void span__hex128(struct trace_id t, char out[33])
{
	span__hex64(t.hi, out);
	span__hex64(t.lo, out + 16);
}
