// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A request's outcome for its record: the classifier's verdict (the
 * kernel's too), the strings around it, and the heads' evidence that
 * kmond's one request was several. */
#include <stdio.h>
#include <string.h>

#include "collectors/tcp/request_http.h"
#include "collectors/tcp/request_outcome.h"

#define REDIS_MAX_ARGS 1024

/* RFC 1035 and RFC 2136's RCODE names (IANA's DNS parameters). */
static const char *const rcode_names[] = {
	"NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",  "REFUSED",
	"YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE",
};

const char *request_outcome__rcode_name(unsigned int rcode)
{
	if (rcode >= sizeof(rcode_names) / sizeof(rcode_names[0]))
		return NULL;
	return rcode_names[rcode];
}

static void set_status_str(struct request_outcome *out, const char *s)
{
	snprintf(out->status_str, sizeof(out->status_str), "%s", s);
	out->has_status = out->status_is_str = true;
}

/* The word at p, ended by a space or the line's end inside the head (a
 * word the head cuts could be any longer word). */
static void status_word(struct request_outcome *out, const uint8_t *p, size_t n)
{
	size_t len = 0;

	while (len < n && p[len] != ' ' && p[len] != '\r') {
		if (p[len] < 0x21 || p[len] > 0x7e ||
		    len == sizeof(out->status_str) - 1)
			return;
		len++;
	}
	if (len == 0 || len == n)
		return;
	memcpy(out->status_str, p, len);
	out->status_str[len] = '\0';
	out->has_status = out->status_is_str = true;
}

/* A RESP length line at b[*at]: digits then CRLF, all inside the head;
 * moves *at past it. */
static bool resp_number(const uint8_t *b, size_t n, size_t *at, uint64_t *v)
{
	size_t i = *at;

	*v = 0;
	if (i >= n || b[i] < '0' || b[i] > '9')
		return false;
	for (; i < n && b[i] >= '0' && b[i] <= '9'; i++) {
		if (*v > (1ULL << 40))
			return false;
		*v = *v * 10 + (b[i] - '0');
	}
	if (i + 2 > n || b[i] != '\r' || b[i + 1] != '\n')
		return false;
	*at = i + 2;
	return true;
}

/* The first command's length from its head: a RESP array's bulk
 * headers (each inside the head; the bulk strings between them may run
 * past it), or an inline command's line. 0: the head does not show it. */
static uint64_t redis_command_len(const uint8_t *b, size_t n)
{
	uint64_t args, len;
	size_t at = 1;

	if (n == 0)
		return 0;
	if (b[0] != '*') {
		for (size_t i = 0; i + 1 < n; i++)
			if (b[i] == '\r' && b[i + 1] == '\n')
				return i + 2;
		return 0;
	}
	if (!resp_number(b, n, &at, &args) || args > REDIS_MAX_ARGS)
		return 0;
	for (uint64_t k = 0; k < args; k++) {
		if (at >= n || b[at] != '$')
			return 0;
		at++;
		if (!resp_number(b, n, &at, &len))
			return 0;
		at += len + 2;
	}
	return at;
}

/* Whether the request head shows more requests than the first: then the
 * response head answers only the first of what kmond counts as one, and
 * the outcome would be a guess. Redis pipelines (redis-benchmark -P,
 * clients' pipelines); HTTP/1.1 clients may pipeline; HTTP/2 clients
 * open several streams at once. */
static bool more_than_one(int proto, const uint8_t *req, size_t req_len,
			  uint64_t req_bytes)
{
	uint64_t len;

	switch (proto) {
	case PROTO_REDIS:
		len = redis_command_len(req, req_len);
		return len && len < req_bytes;
	case PROTO_HTTP:
		return request_http__more_than_one(req, req_len, req_bytes);
	case PROTO_HTTP2:
		return request_http2__streams(req, req_len) > 1;
	}
	return false;
}

static bool is_sqlstate(const uint8_t *s)
{
	for (int i = 0; i < 5; i++)
		if (!(s[i] >= '0' && s[i] <= '9') &&
		    !(s[i] >= 'A' && s[i] <= 'Z'))
			return false;
	return true;
}

/* An ErrorResponse's SQLSTATE: its 'C' field, whole inside the head. */
static void pg_sqlstate(struct request_outcome *out, const uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off + 5 <= n) {
		size_t mlen = (size_t)b[off + 1] << 24 | b[off + 2] << 16 |
			      b[off + 3] << 8 | b[off + 4];
		size_t end = off + 1 + mlen, f = off + 5;

		if (mlen < 4)
			return;
		if (b[off] != 'E') {
			off = end;
			continue;
		}
		if (end > n)
			end = n;
		while (f < end && b[f]) {
			const uint8_t *nul = memchr(b + f + 1, 0, end - f - 1);

			if (!nul)
				return;
			if (b[f] == 'C' && nul - (b + f + 1) == 5 &&
			    is_sqlstate(b + f + 1)) {
				memcpy(out->status_str, b + f + 1, 5);
				out->status_str[5] = '\0';
				out->has_status = out->status_is_str = true;
			}
			f = nul - b + 1;
		}
		return;
	}
}

/* The binary protocol's statuses as the text protocol's words, where
 * it has one; else the number. Success (0) has no word. */
static void memcached_binary_status(struct request_outcome *out,
				    unsigned int status)
{
	char num[12];

	switch (status) {
	case 0:
		return;
	case 1:
		set_status_str(out, "NOT_FOUND");
		return;
	case 2:
		set_status_str(out, "EXISTS");
		return;
	case 5:
		set_status_str(out, "NOT_STORED");
		return;
	case 0x81:
		set_status_str(out, "ERROR");
		return;
	}
	snprintf(num, sizeof(num), "%u", status);
	set_status_str(out, num);
}

static void status_of(struct request_outcome *out, int proto,
		      const struct outcome *o, const uint8_t *b, size_t n)
{
	const char *name;

	switch (proto) {
	case PROTO_REDIS:
		/* a blob error's word comes after its length line */
		if (o->error && b[0] == '-')
			status_word(out, b + 1, n - 1);
		else if (o->error)
			for (size_t i = 1; i + 2 < n; i++)
				if (b[i] == '\n') {
					status_word(out, b + i + 1, n - i - 1);
					break;
				}
		return;
	case PROTO_POSTGRESQL:
		if (o->error)
			pg_sqlstate(out, b, n);
		return;
	case PROTO_MEMCACHED:
		/* incr and decr answer with the number: a value, not a
		 * status (and unbounded) */
		if (b[0] == 0x81)
			memcached_binary_status(out, o->status);
		else if (b[0] < '0' || b[0] > '9')
			status_word(out, b, n);
		return;
	case PROTO_DNS:
		name = request_outcome__rcode_name(o->status);
		if (name) {
			set_status_str(out, name);
		} else {
			char num[12];

			snprintf(num, sizeof(num), "%u", o->status);
			set_status_str(out, num);
		}
		return;
	case PROTO_ZOOKEEPER:
		out->status_num = (int32_t)o->status;
		out->has_status = o->has_status;
		return;
	}
	out->status_num = o->status;
	out->has_status = o->has_status;
}

/* Nothing known: the flags and numbers cleared, the strings empty (not
 * the whole struct: clearing its 200 bytes was a third of what decoding
 * a record cost). */
static void reset(struct request_outcome *out)
{
	out->known = out->error = false;
	out->has_status = out->status_is_str = false;
	out->has_method = out->has_path = out->has_grpc = false;
	out->status_num = 0;
	out->grpc_status = 0;
	out->status_str[0] = out->method[0] = out->path[0] = '\0';
}

/* OpenTelemetry's gRPC conventions: the codes a server's call failed
 * on (its caller's mistakes, NOT_FOUND or INVALID_ARGUMENT, are not the
 * server's errors); a client's call failed on any but OK. */
static bool grpc_error(int side, int code)
{
	if (side == TCP_SIDE_CLIENT)
		return code != 0;
	switch (code) {
	case 2: /* UNKNOWN */
	case 4: /* DEADLINE_EXCEEDED */
	case 12: /* UNIMPLEMENTED */
	case 13: /* INTERNAL */
	case 14: /* UNAVAILABLE */
	case 15: /* DATA_LOSS */
		return true;
	}
	return false;
}

/* o, HTTP/2's outcome by its :status, made gRPC's: the grpc-status's
 * when the head held one, else known only where the :status says the
 * call failed (a 200 answers failed calls too). */
static void grpc_outcome(struct outcome *o, int side, bool has_grpc,
			 int grpc_status)
{
	if (has_grpc) {
		o->known = 1;
		o->error = grpc_error(side, grpc_status);
	} else if (!o->error) {
		/* a 200 answers failed calls too */
		o->known = 0;
	}
}

void request_outcome__classify(struct outcome *o, int proto, int side,
			       const uint8_t *resp, size_t resp_len,
			       uint32_t stream, bool grpc)
{
	struct request_outcome g;

	outcome_classify(o, proto, side, resp, resp_len, stream);
	if (!grpc || proto != PROTO_HTTP2)
		return;
	g.has_grpc = false;
	request_http2__grpc(&g, resp, resp_len, stream);
	grpc_outcome(o, side, g.has_grpc, g.grpc_status);
}

void request_outcome__decode(struct request_outcome *out, int proto, int side,
			     const uint8_t *req, size_t req_len,
			     uint64_t req_bytes, const uint8_t *resp,
			     size_t resp_len, uint64_t resp_bytes, bool grpc)
{
	uint8_t head[OUTCOME_RESP_HEAD] = { 0 };
	uint32_t stream;
	struct outcome o;

	reset(out);
	if (req_len > req_bytes)
		req_len = req_bytes;
	if (resp_len > resp_bytes)
		resp_len = resp_bytes;
	if (resp_len > sizeof(head))
		resp_len = sizeof(head);
	memcpy(head, resp, resp_len);
	stream = outcome_h2_request_stream(req, req_len);
	grpc = grpc && proto == PROTO_HTTP2;
	request_outcome__classify(&o, proto, side, head, resp_len, stream,
				  grpc);

	if (proto == PROTO_HTTP)
		request_http__line(out, req, req_len);
	if (proto == PROTO_HTTP2)
		request_http2__request(out, req, req_len);
	if (more_than_one(proto, req, req_len, req_bytes))
		return;
	if (proto == PROTO_HTTP2)
		request_http2__grpc(out, resp, resp_len, stream);
	/* gRPC's :status stands without its outcome */
	if (!o.known && !(grpc && o.has_status))
		return;
	out->known = o.known;
	out->error = o.known && o.error;
	status_of(out, proto, &o, head, resp_len);
}
