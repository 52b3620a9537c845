// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OTLP JSON by hand: a handful of message types, written straight into a
 * buffer. Attributes follow OpenTelemetry's semantic conventions where
 * one exists (network.*, server.*, client.*, db.system, ...); kmond's
 * own figures are kmon.* attributes. Fields at their default value are
 * left out, as the protobuf JSON mapping does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.h"
#include "lib/array.h"
#include "lib/xalloc.h"

#define SCOPE_NAME "kmon-trace"
#define SCOPE_VERSION "0.1.0"

enum { SPAN_KIND_SERVER = 2, SPAN_KIND_CLIENT = 3 };
enum { STATUS_CODE_ERROR = 2 };

/* The HTTP methods the semantic conventions know; any other is written
 * as _OTHER, the method as sent beside it. */
static const char *const http_methods[] = {
	"CONNECT", "DELETE", "GET", "HEAD",  "OPTIONS",
	"PATCH",   "POST",   "PUT", "TRACE",
};

static const struct {
	const char *protocol, *attr;
} protocol_attrs[] = {
	{ "redis", "db.system" },	 { "postgresql", "db.system" },
	{ "mysql", "db.system" },	 { "memcached", "db.system" },
	{ "kafka", "messaging.system" }, { "mqtt", "messaging.system" },
	{ "amqp", "messaging.system" },	 { "grpc", "rpc.system" },
};

const char *otlp__protocol_attr(const char *protocol)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protocol_attrs); i++)
		if (strcmp(protocol, protocol_attrs[i].protocol) == 0)
			return protocol_attrs[i].attr;
	return NULL;
}

static const char *service_of(const struct span *s)
{
	if (s->service)
		return s->service;
	return s->comm ? s->comm : "unknown_service";
}

static void key(struct strbuf *sb, bool *first, const char *k)
{
	if (!*first)
		strbuf__addc(sb, ',');
	*first = false;
	strbuf__adds(sb, "{\"key\":");
	strbuf__add_json_str(sb, k, strlen(k));
}

static void attr_str(struct strbuf *sb, bool *first, const char *k,
		     const char *v)
{
	if (!v)
		return;
	key(sb, first, k);
	strbuf__adds(sb, ",\"value\":{\"stringValue\":");
	strbuf__add_json_str(sb, v, strlen(v));
	strbuf__adds(sb, "}}");
}

/* int64 as OTLP JSON writes it: a decimal string. */
static void attr_int(struct strbuf *sb, bool *first, const char *k, uint64_t v)
{
	key(sb, first, k);
	strbuf__adds(sb, ",\"value\":{\"intValue\":\"");
	strbuf__add_u64(sb, v);
	strbuf__adds(sb, "\"}}");
}

static void attr_protocol(struct strbuf *sb, bool *first, const char *p)
{
	const char *attr;

	if (!p || strcmp(p, "unknown") == 0)
		return;
	if (strcmp(p, "http2") == 0) {
		attr_str(sb, first, "network.protocol.name", "http");
		attr_str(sb, first, "network.protocol.version", "2");
		return;
	}
	attr_str(sb, first, "network.protocol.name", p);
	attr = otlp__protocol_attr(p);
	if (attr)
		attr_str(sb, first, attr, p);
	if (attr && strcmp(attr, "db.system") == 0)
		attr_str(sb, first, "db.system.name", p); /* semconv 1.26+ */
	if (strcmp(p, "tls") == 0)
		attr_str(sb, first, "tls.protocol.name", "tls");
}

static bool is_http(const char *protocol)
{
	return protocol &&
	       (!strcmp(protocol, "http") || !strcmp(protocol, "http2"));
}

static void attr_method(struct strbuf *sb, bool *first, const char *method)
{
	size_t i;

	if (!method)
		return;
	for (i = 0; i < ARRAY_SIZE(http_methods); i++)
		if (strcmp(method, http_methods[i]) == 0)
			break;
	if (i < ARRAY_SIZE(http_methods)) {
		attr_str(sb, first, "http.request.method", method);
		return;
	}
	attr_str(sb, first, "http.request.method", "_OTHER");
	attr_str(sb, first, "http.request.method_original", method);
}

/* The request's outcome as kmond wrote it: the status under the
 * semantic conventions' name for its protocol (kmon.status where they
 * have none: dns, zookeeper, mqtt), error.type on a failed one. */
static void attr_outcome(struct strbuf *sb, bool *first, const struct span *s)
{
	const char *attr = s->protocol ? otlp__protocol_attr(s->protocol) :
					 NULL;
	char grpc[12];

	attr_method(sb, first, s->method);
	attr_str(sb, first, "http.route", s->route);
	if (s->status && is_http(s->protocol) && s->status_is_number &&
	    s->status_number >= 0)
		attr_int(sb, first, "http.response.status_code",
			 (uint64_t)s->status_number);
	else if (s->status && attr && !strcmp(attr, "db.system"))
		attr_str(sb, first, "db.response.status_code", s->status);
	else
		attr_str(sb, first, "kmon.status", s->status);
	if (s->has_grpc_status) {
		attr_str(sb, first, "rpc.system", "grpc");
		attr_int(sb, first, "rpc.grpc.status_code", s->grpc_status);
	}
	if (s->outcome != SPAN_OUTCOME_ERROR)
		return;
	/* a failed gRPC call: its own code says more than :status */
	snprintf(grpc, sizeof(grpc), "%u", (unsigned)s->grpc_status);
	if (s->has_grpc_status && s->grpc_status)
		attr_str(sb, first, "error.type", grpc);
	else
		attr_str(sb, first, "error.type",
			 s->status ? s->status : "_OTHER");
}

static void span_json(struct strbuf *sb, struct trace_id trace,
		      const struct span *s)
{
	const char *proto = s->protocol ? s->protocol : "tcp";
	char hex[33];
	bool first = true;

	span__hex128(trace, hex);
	strbuf__addf(sb, "{\"traceId\":\"%s\"", hex);
	span__hex64(s->id, hex);
	strbuf__addf(sb, ",\"spanId\":\"%s\"", hex);
	if (s->parent) {
		span__hex64(s->parent, hex);
		strbuf__addf(sb, ",\"parentSpanId\":\"%s\"", hex);
	}
	strbuf__addf(sb, ",\"name\":");
	{
		struct strbuf name = { 0 };

		strbuf__addf(&name, "%s %s",
			     strcmp(proto, "unknown") == 0 ? "tcp" : proto,
			     s->client ? "client" : "server");
		strbuf__add_json_str(sb, name.buf, name.len);
		strbuf__free(&name);
	}
	strbuf__addf(sb, ",\"kind\":%d",
		     s->client ? SPAN_KIND_CLIENT : SPAN_KIND_SERVER);
	strbuf__adds(sb, ",\"startTimeUnixNano\":\"");
	strbuf__add_u64(sb, s->start_ns);
	strbuf__adds(sb, "\",\"endTimeUnixNano\":\"");
	strbuf__add_u64(sb, s->end_ns);
	strbuf__adds(sb, "\",\"attributes\":[");
	attr_str(sb, &first, "network.transport", "tcp");
	attr_str(sb, &first, "network.type", s->ipv6 ? "ipv6" : "ipv4");
	attr_str(sb, &first, "network.peer.address", s->raddr);
	attr_int(sb, &first, "network.peer.port", s->rport);
	attr_str(sb, &first, "network.local.address", s->laddr);
	attr_int(sb, &first, "network.local.port", s->lport);
	if (s->client) {
		attr_str(sb, &first, "server.address", s->raddr);
		attr_int(sb, &first, "server.port", s->rport);
	} else {
		attr_str(sb, &first, "client.address", s->raddr);
		attr_int(sb, &first, "client.port", s->rport);
	}
	attr_protocol(sb, &first, s->protocol);
	attr_outcome(sb, &first, s);
	if (s->tid)
		attr_int(sb, &first, "thread.id", s->tid);
	attr_str(sb, &first, "kmon.node", s->node);
	attr_str(sb, &first, "kmon.dst", s->dst);
	/* How the parent was found: kmond's link on a call, the sequence
	 * numbers for a server request joined to its caller. */
	if (s->parent)
		attr_str(sb, &first, "kmon.link",
			 s->client ? (s->link ? s->link : "unknown") :
				     (s->joined ? "tcp_seq" : s->link));
	attr_int(sb, &first, "kmon.req_bytes", s->req_bytes);
	attr_int(sb, &first, "kmon.resp_bytes", s->resp_bytes);
	strbuf__addc(sb, ']');
	/* OpenTelemetry: left unset unless the request failed */
	if (s->outcome == SPAN_OUTCOME_ERROR)
		strbuf__addf(sb, ",\"status\":{\"code\":%d}",
			     STATUS_CODE_ERROR);
	strbuf__addc(sb, '}');
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* Spans of one resource are next to each other; order kept otherwise. */
static int by_resource(const void *a, const void *b)
{
	const struct span *x = **(const struct span *const *const *)a;
	const struct span *y = **(const struct span *const *const *)b;
	int c = strcmp(x->node, y->node);

	if (!c)
		c = strcmp(service_of(x), service_of(y));
	if (!c)
		c = x->pid < y->pid ? -1 : x->pid > y->pid;
	if (!c)
		c = strcmp(str_or_empty(x->comm), str_or_empty(y->comm));
	if (!c) /* stable: by position in the trace */
		c = *(const struct span *const *const *)a <
				    *(const struct span *const *const *)b ?
			    -1 :
			    1;
	return c;
}

static bool same_resource(const struct span *x, const struct span *y)
{
	return strcmp(x->node, y->node) == 0 &&
	       strcmp(service_of(x), service_of(y)) == 0 && x->pid == y->pid &&
	       strcmp(str_or_empty(x->comm), str_or_empty(y->comm)) == 0;
}

static void resource_json(struct strbuf *sb, const struct span *s)
{
	bool first = true;

	strbuf__adds(sb, "{\"resource\":{\"attributes\":[");
	attr_str(sb, &first, "service.name", service_of(s));
	attr_str(sb, &first, "host.name", s->node);
	if (s->pid)
		attr_int(sb, &first, "process.pid", s->pid);
	attr_str(sb, &first, "process.executable.name", s->comm);
	strbuf__adds(sb, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"" SCOPE_NAME
			 "\",\"version\":\"" SCOPE_VERSION "\"},\"spans\":[");
}

void otlp__resource_spans(const struct trace_view *t, struct strbuf *out)
{
	struct span *const **order;
	size_t i;

	if (!t->n)
		return;
	order = xmalloc(t->n * sizeof(*order));
	for (i = 0; i < t->n; i++)
		order[i] = &t->spans[i];
	qsort(order, t->n, sizeof(*order), by_resource);
	for (i = 0; i < t->n; i++) {
		const struct span *s = *order[i];

		if (i == 0 || !same_resource(*order[i - 1], s)) {
			if (i)
				strbuf__adds(out, "]}]},");
			resource_json(out, s);
		} else {
			strbuf__addc(out, ',');
		}
		span_json(out, t->id, s);
	}
	strbuf__adds(out, "]}]}");
	free(order);
}

void otlp__request(const struct trace_view *t, struct strbuf *out)
{
	strbuf__adds(out, "{\"resourceSpans\":[");
	otlp__resource_spans(t, out);
	strbuf__adds(out, "]}");
}
