// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tcp records -> spans, each field checked: a span with a wrong id would
 * hang under the wrong parent, so a record that cannot be read exactly
 * is refused with the reason. A record is read in one pass with no
 * allocation (json_scan.h), and a span is one allocation: at hundreds of
 * thousands of records a second, a tree of values and a copy of each
 * string was most of the cost (docs/consumers.md). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "span.h"
#include "lib/array.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		goto fail;                          \
	} while (0)

/* Each byte's hex digit value plus one, 0 for a byte that is not one:
 * three ids a record, read a digit at a time with comparisons, were a
 * twentieth of kmon-trace --fleet's time. */
static const uint8_t hex_digit[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,	['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Exactly n lowercase or uppercase hex digits (n <= 16) into *out. */
static bool parse_hex(const char *s, size_t n, uint64_t *out)
{
	bool not_hex = false;
	uint64_t v = 0;
	unsigned d;
	size_t i;

	for (i = 0; i < n; i++) {
		d = hex_digit[(unsigned char)s[i]];
		not_hex |= d == 0;
		v = v << 4 | ((d - 1) & 0xf);
	}
	if (not_hex)
		return false;
	*out = v;
	return true;
}

static const char *const field_names[SPAN_FIELDS] = {
	[SPAN_KIND] = "kind",
	[SPAN_TS] = "ts",
	[SPAN_LATENCY_NS] = "latency_ns",
	[SPAN_ID] = "id",
	[SPAN_TRACE] = "trace",
	[SPAN_PARENT] = "parent",
	[SPAN_NODE] = "node",
	[SPAN_SERVICE] = "service",
	[SPAN_COMM] = "comm",
	[SPAN_LADDR] = "laddr",
	[SPAN_RADDR] = "raddr",
	[SPAN_PROTOCOL] = "protocol",
	[SPAN_DST] = "dst",
	[SPAN_LINK] = "link",
	[SPAN_METHOD] = "method",
	[SPAN_ROUTE] = "route",
	[SPAN_SIDE] = "side",
	[SPAN_FAMILY] = "family",
	[SPAN_LPORT] = "lport",
	[SPAN_RPORT] = "rport",
	[SPAN_REQ_SEQ] = "req_seq",
	[SPAN_RESP_SEQ] = "resp_seq",
	[SPAN_PID] = "pid",
	[SPAN_TID] = "tid",
	[SPAN_REQ_BYTES] = "req_bytes",
	[SPAN_RESP_BYTES] = "resp_bytes",
	[SPAN_ERROR] = "error",
	[SPAN_STATUS] = "status",
	[SPAN_GRPC_STATUS] = "grpc_status",
};

/* The string fields of a span: the record's member, and the span's
 * pointer that span__new sets into its own allocation. */
static const struct {
	enum span_field field;
	size_t member; /* offsetof(struct span, ...): a char * */
} string_fields[] = {
	{ SPAN_NODE, offsetof(struct span, node) },
	{ SPAN_SERVICE, offsetof(struct span, service) },
	{ SPAN_COMM, offsetof(struct span, comm) },
	{ SPAN_LADDR, offsetof(struct span, laddr) },
	{ SPAN_RADDR, offsetof(struct span, raddr) },
	{ SPAN_PROTOCOL, offsetof(struct span, protocol) },
	{ SPAN_DST, offsetof(struct span, dst) },
	{ SPAN_LINK, offsetof(struct span, link) },
	{ SPAN_METHOD, offsetof(struct span, method) },
	{ SPAN_ROUTE, offsetof(struct span, route) },
};

static struct json_scan_keys keys;

enum span_kind span__scan(const char *text, size_t len, struct span_record *r,
			  struct json_error *err)
{
	const struct json_scan_value *kind = &r->v[SPAN_KIND];

	if (!keys.n)
		json_scan__keys(&keys, field_names, SPAN_FIELDS);
	if (!json_scan(text, len, &keys, r->v, err))
		return SPAN_RECORD_NOT_JSON;
	if (kind->type != JSON_SCAN_STRING)
		return SPAN_RECORD_NO_KIND;
	if (kind->len == 3 && memcmp(kind->s, "tcp", 3) == 0)
		return SPAN_RECORD_TCP;
	return SPAN_RECORD_OTHER;
}

/* A string value as plain bytes: itself, or decoded into buf (NULL when
 * longer than buf). */
static const char *plain(const struct json_scan_value *v, char *buf,
			 size_t size, size_t *len)
{
	if (v->type != JSON_SCAN_STRING)
		return NULL;
	if (!v->escaped) {
		*len = v->len;
		return v->s;
	}
	if (v->len >= size)
		return NULL;
	*len = json_scan__string(v, buf);
	return buf;
}

static bool string_is(const struct json_scan_value *v, const char *word)
{
	size_t len, n = strlen(word);
	char buf[64];
	const char *s = plain(v, buf, sizeof(buf), &len);

	return s && len == n && memcmp(s, word, n) == 0;
}

/* A 16-hex id, not all zeroes (OTLP: an all-zero span id is invalid). */
static bool read_id(const struct json_scan_value *v, uint64_t *out)
{
	char buf[64];
	size_t len;
	const char *s = plain(v, buf, sizeof(buf), &len);

	return s && len == 16 && parse_hex(s, 16, out) && *out;
}

bool span__parse_trace_id(const char *s, size_t len, struct trace_id *out)
{
	return len == 32 && parse_hex(s, 16, &out->hi) &&
	       parse_hex(s + 16, 16, &out->lo) && (out->hi || out->lo);
}

static bool read_trace_id(const struct json_scan_value *v, struct trace_id *out)
{
	char buf[64];
	size_t len;
	const char *s = plain(v, buf, sizeof(buf), &len);

	return s && span__parse_trace_id(s, len, out);
}

static bool absent(const struct json_scan_value *v)
{
	return v->type == JSON_SCAN_ABSENT || v->type == JSON_SCAN_NULL;
}

/* An optional unsigned number at most max; *out 0 when absent or null. */
static bool opt_uint(const struct json_scan_value *v, uint64_t max,
		     uint64_t *out, bool *present)
{
	*out = 0;
	*present = !absent(v);
	if (!*present)
		return true;
	return json_scan__u64(v, out) && *out <= max;
}

/* `error`: true, false, or absent (or null) when kmond did not know. */
static bool read_outcome(const struct json_scan_value *v,
			 enum span_outcome *out)
{
	*out = SPAN_OUTCOME_UNKNOWN;
	if (absent(v))
		return true;
	if (v->type != JSON_SCAN_BOOL)
		return false;
	*out = v->b ? SPAN_OUTCOME_ERROR : SPAN_OUTCOME_OK;
	return true;
}

/* `status`: a number for some protocols (HTTP's code, MySQL's error
 * number, ZooKeeper's negative err), a string for others (SQLSTATE,
 * Redis's error word, the DNS RCODE's name); span__new keeps its text. */
static bool read_status(const struct json_scan_value *v, struct span *s)
{
	if (absent(v) || v->type == JSON_SCAN_STRING)
		return true;
	if (!json_scan__i64(v, &s->status_number))
		return false;
	s->status_is_number = true;
	return true;
}

static const char *what(const struct span_record *r, enum span_field f)
{
	return r->v[f].type == JSON_SCAN_ABSENT ? "missing" : "invalid";
}

bool span__check(const struct span_record *r, struct span *s, char *err,
		 size_t errlen)
{
	const struct json_scan_value *v = r->v;
	uint64_t ts, latency, u;
	bool has, has2;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->partition = -1;
	if (!json_scan__u64(&v[SPAN_TS], &ts))
		FAIL("ts: %s", what(r, SPAN_TS));
	if (!json_scan__u64(&v[SPAN_LATENCY_NS], &latency) || latency > ts)
		FAIL("latency_ns: %s", what(r, SPAN_LATENCY_NS));
	s->end_ns = ts; /* kmond stamps a request with its end */
	s->start_ns = ts - latency;
	if (!read_id(&v[SPAN_ID], &s->id))
		FAIL("id: %s (16 hex digits, not all zero)", what(r, SPAN_ID));
	if (!read_trace_id(&v[SPAN_TRACE], &s->trace_id))
		FAIL("trace: %s (32 hex digits, not all zero)",
		     what(r, SPAN_TRACE));
	if (!absent(&v[SPAN_PARENT]) && !read_id(&v[SPAN_PARENT], &s->parent))
		FAIL("parent: invalid (16 hex digits, not all zero)");
	if (s->parent == s->id && s->parent)
		FAIL("parent: the span's own id");
	for (i = 0; i < ARRAY_SIZE(string_fields); i++)
		if (!absent(&v[string_fields[i].field]) &&
		    v[string_fields[i].field].type != JSON_SCAN_STRING)
			FAIL("%s: expected a string",
			     field_names[string_fields[i].field]);
	if (absent(&v[SPAN_NODE]))
		FAIL("node: missing");
	if (v[SPAN_SIDE].type != JSON_SCAN_ABSENT &&
	    v[SPAN_SIDE].type != JSON_SCAN_STRING)
		FAIL("side: expected a string");
	/* kmond before client-side records wrote server ones without it */
	if (string_is(&v[SPAN_SIDE], "client"))
		s->client = true;
	else if (v[SPAN_SIDE].type == JSON_SCAN_STRING &&
		 !string_is(&v[SPAN_SIDE], "server"))
		FAIL("side: \"%.*s\" is neither server nor client",
		     (int)v[SPAN_SIDE].len, v[SPAN_SIDE].s);
	s->ipv6 = string_is(&v[SPAN_FAMILY], "ipv6");
	if (!opt_uint(&v[SPAN_LPORT], 65535, &u, &has) || !has)
		FAIL("lport: %s", what(r, SPAN_LPORT));
	s->lport = u;
	if (!opt_uint(&v[SPAN_RPORT], 65535, &u, &has) || !has)
		FAIL("rport: %s", what(r, SPAN_RPORT));
	s->rport = u;
	if (!opt_uint(&v[SPAN_REQ_SEQ], UINT32_MAX, &u, &has))
		FAIL("req_seq: invalid");
	s->req_seq = u;
	if (!opt_uint(&v[SPAN_RESP_SEQ], UINT32_MAX, &u, &has2))
		FAIL("resp_seq: invalid");
	s->resp_seq = u;
	if (has != has2)
		FAIL("%s: missing (req_seq and resp_seq come together)",
		     has ? "resp_seq" : "req_seq");
	/* Both zero: kmond did not know them (2^-64 by chance). */
	s->has_seq = has && (s->req_seq || s->resp_seq);
	if (!opt_uint(&v[SPAN_PID], UINT32_MAX, &u, &has))
		FAIL("pid: invalid");
	s->pid = u;
	if (!opt_uint(&v[SPAN_TID], UINT32_MAX, &u, &has))
		FAIL("tid: invalid");
	s->tid = u;
	if (!opt_uint(&v[SPAN_REQ_BYTES], UINT64_MAX, &s->req_bytes, &has))
		FAIL("req_bytes: invalid");
	if (!opt_uint(&v[SPAN_RESP_BYTES], UINT64_MAX, &s->resp_bytes, &has))
		FAIL("resp_bytes: invalid");
	if (!read_outcome(&v[SPAN_ERROR], &s->outcome))
		FAIL("error: expected true or false");
	if (!read_status(&v[SPAN_STATUS], s))
		FAIL("status: expected an integer or a string");
	if (!opt_uint(&v[SPAN_GRPC_STATUS], UINT32_MAX, &u,
		      &s->has_grpc_status))
		FAIL("grpc_status: invalid");
	s->grpc_status = u;
	return true;
fail:
	return false;
}

#define STATUS_DIGITS 24 /* "-9223372036854775808" and its NUL */

struct span *span__new(const struct span *checked, const struct span_record *r,
		       const char *raw, size_t raw_len)
{
	const struct json_scan_value *status = &r->v[SPAN_STATUS];
	size_t size = sizeof(*checked) + STATUS_DIGITS, i;
	struct span *s;
	char *at;

	for (i = 0; i < ARRAY_SIZE(string_fields); i++)
		if (r->v[string_fields[i].field].type == JSON_SCAN_STRING)
			size += r->v[string_fields[i].field].len + 1;
	if (status->type == JSON_SCAN_STRING)
		size += status->len + 1;
	if (raw)
		size += raw_len + 1;
	s = xmalloc(size);
	*s = *checked;
	at = (char *)(s + 1);
	for (i = 0; i < ARRAY_SIZE(string_fields); i++) {
		const struct json_scan_value *v = &r->v[string_fields[i].field];

		if (v->type != JSON_SCAN_STRING)
			continue;
		*(char **)((char *)s + string_fields[i].member) = at;
		at += json_scan__string(v, at) + 1;
	}
	if (status->type == JSON_SCAN_STRING) {
		s->status = at;
		at += json_scan__string(status, at) + 1;
	} else if (s->status_is_number) {
		s->status = at;
		at += snprintf(at, STATUS_DIGITS, "%lld",
			       (long long)s->status_number) +
		      1;
	}
	if (raw) {
		s->raw = at;
		s->raw_len = raw_len;
		memcpy(at, raw, raw_len);
		at[raw_len] = '\0';
	}
	return s;
}

struct span *span__read(const char *text, size_t len, char *err, size_t errlen)
{
	struct span_record r;
	struct json_error jerr;
	struct span checked;

	if (span__scan(text, len, &r, &jerr) == SPAN_RECORD_NOT_JSON) {
		snprintf(err, errlen, "not JSON (column %zu): %s", jerr.col,
			 jerr.msg);
		return NULL;
	}
	if (!span__check(&r, &checked, err, errlen))
		return NULL;
	return span__new(&checked, &r, NULL, 0);
}

void span__free(struct span *s)
{
	free(s); /* its strings and record are in its allocation */
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
