/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Traces as OpenTelemetry's OTLP JSON (the protobuf JSON mapping with
 * OTLP's rules: trace and span ids in hex, 64-bit integers as decimal
 * strings, enums as numbers, field names in lowerCamelCase). */
#ifndef KMON_TRACE_OTLP_H
#define KMON_TRACE_OTLP_H

#include "lib/strbuf.h"
#include "traces.h"

/* Appends the ResourceSpans of one trace, comma-separated, without the
 * enclosing array: items of ExportTraceServiceRequest.resourceSpans, so
 * several traces can share one request. Spans are grouped by resource
 * (node, service, process). */
void otlp__resource_spans(const struct trace_view *t, struct strbuf *out);

/* One whole ExportTraceServiceRequest for a trace (no newline). */
void otlp__request(const struct trace_view *t, struct strbuf *out);

/* The semantic-convention attribute for a kmond protocol name
 * (DESIGN: http, redis, kafka ...): e.g. "db.system" for redis; NULL when
 * there is none beyond network.protocol.name. */
const char *otlp__protocol_attr(const char *protocol);

#endif
