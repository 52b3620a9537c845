// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: kmon-trace's store driven by any sequence of spans,
 * quiet passes and flushes. Ids, traces, parents, sequence numbers and
 * ports come from small ranges so joins, merges, ambiguous keys and
 * evictions collide all the time. Every span must be written exactly
 * once, in a trace whose OTLP JSON parses, and nothing may stay open. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "consumers/kmon-trace/otlp.h"
#include "consumers/kmon-trace/traces.h"
#include "lib/json_parse.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define OP_BYTES 8

struct seen {
	uint64_t written;
	uint8_t times[256]; /* per span id: how often written */
};

static void on_write(const struct trace_view *t, void *ctx)
{
	struct seen *seen = ctx;
	struct strbuf sb = { 0 };
	struct json_error err;
	struct json_value *v;
	size_t i;

	for (i = 0; i < t->n; i++)
		seen->times[t->spans[i]->id & 0xff]++;
	seen->written += t->n;
	otlp__request(t, &sb);
	v = json__parse(sb.buf, sb.len, &err);
	if (!v)
		abort();
	json__free(v);
	strbuf__free(&sb);
}

/* A span's strings live in its own allocation (span__new), which
 * span__free frees whole: a span made here points at these instead. */
static char node1[] = "n1", node2[] = "n2";
static char addr1[] = "10.0.0.1", addr2[] = "10.0.0.2", addr3[] = "10.0.0.3";
static char service[] = "svc", protocol[] = "redis";

static struct span *span_of(const uint8_t *b, uint64_t id)
{
	struct span *s = xcalloc(1, sizeof(*s));

	s->id = id;
	s->client = b[0] & 1;
	s->trace_id = (struct trace_id){ 0, 1 + (b[1] & 7) };
	if (b[0] & 2)
		s->parent = 1 + (b[2] & 0x1f);
	s->has_seq = b[0] & 4;
	s->req_seq = b[3] & 3;
	s->resp_seq = (b[0] & 8) ? b[3] & 3 : b[3] >> 6;
	s->lport = b[4] & 3;
	s->rport = (b[4] >> 2) & 3;
	s->start_ns = 1000;
	s->end_ns = 1000 + b[5];
	s->node = b[6] & 1 ? node1 : node2;
	s->laddr = b[6] & 8 ? addr1 : addr2;
	s->raddr = b[6] & 16 ? addr3 : b[6] & 32 ? addr1 : addr2;
	if (b[6] & 2)
		s->service = service;
	if (b[6] & 4)
		s->protocol = protocol;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen seen = { 0 };
	struct traces *t;
	uint64_t now = 0, added = 0, i;

	if (size < 2)
		return 0;
	t = traces__new(1 + data[0] % 8, 1 + data[1] % 16,
			data[0] & 0x80 ? 0 : 1 + data[1] % 64, on_write, &seen);
	for (i = 2; i + OP_BYTES <= size && added < 255; i += OP_BYTES) {
		const uint8_t *b = data + i;

		now += b[7] & 0xf;
		switch (b[7] >> 6) {
		case 0:
		case 1:
			/* ids unique, 1..255: the low byte counts writes */
			traces__add(t, span_of(b, ++added), now);
			break;
		case 2:
			traces__expire(t, now, b[5] & 0x1f);
			break;
		case 3:
			traces__flush(t);
			break;
		}
	}
	traces__flush(t);
	if (seen.written != added || traces__counts(t)->open_spans ||
	    traces__counts(t)->open_traces ||
	    traces__counts(t)->spans_written != added)
		abort();
	for (i = 1; i <= added; i++)
		if (seen.times[i] != 1)
			abort();
	traces__free(t);
	return 0;
}
