// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Checkpoints of kmon-topo --fleet (checkpoint.h). A checkpoint is one
 * or more messages
 * {"kind":"topology_checkpoint","ts":..,"node":..,"id":..,"part":I,
 *  <topo__partial_fields>} in order, the last also with "parts":N,
 * "merged":[{"partition":P,"next":N},..] (the partial topic) and
 * "covered":[{"partition":P,"start":S,"next":N},..] (the topology
 * topic). Unkeyed: the topic is kept by time, like the partial topic
 * (a compacted one could mix the parts of two checkpoints). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "coverage.h"
#include "graph.h"
#include "lib/clock.h"
#include "lib/json_parse.h"
#include "lib/record.h"
#include "lib/xalloc.h"

/* --- writing --- */

static void json_merged(const struct topo_merged *m, struct record *r)
{
	record__array_begin(r, "merged");
	for (int p = 0; p < m->nmerged; p++) {
		record__object_begin(r, NULL);
		record__u64(r, "partition", (uint64_t)p);
		record__i64(r, "next", m->merged_next[p]);
		record__object_end(r);
	}
	record__array_end(r);
}

static void json_covered(const struct topo_merged *m, struct record *r)
{
	int32_t partition;
	int64_t start, next;

	record__array_begin(r, "covered");
	for (size_t k = 0;
	     coverage__span(m->covered, k, &partition, &start, &next); k++) {
		record__object_begin(r, NULL);
		record__u64(r, "partition", (uint64_t)partition);
		record__i64(r, "start", start);
		record__i64(r, "next", next);
		record__object_end(r);
	}
	record__array_end(r);
}

int checkpoint__write(rd_kafka_topic_t *topic, const char *host, const char *id,
		      const struct topo_merged *m, size_t part_bytes,
		      void *msg_opaque)
{
	size_t edge = 0;
	int part = 0;
	bool last;

	do {
		struct record r;
		int err;

		record__init(&r);
		record__begin(&r, "topology_checkpoint",
			      clock_ns(CLOCK_REALTIME), host);
		record__str(&r, "id", id);
		record__u64(&r, "part", (uint64_t)part);
		last = topo__partial_fields(m->graph, &r, &edge, part_bytes);
		if (last) {
			record__u64(&r, "parts", (uint64_t)part + 1);
			json_merged(m, &r);
			json_covered(m, &r);
		}
		record__end(&r);
		err = rd_kafka_produce(topic, 0, RD_KAFKA_MSG_F_COPY,
				       r.json.buf, r.json.len, NULL, 0,
				       msg_opaque);
		record__free(&r);
		if (err)
			return -1;
		part++;
	} while (!last);
	return part;
}

/* --- loading --- */

/* The messages of one checkpoint, in order, as read. */
struct parts {
	char *id; /* NULL: none begun */
	char **text;
	size_t *len;
	size_t n;
	uint64_t seq; /* when its last part was read */
};

/* Its parts gone, its id kept. */
static void parts__clear_parts(struct parts *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->text[i]);
	free(p->text);
	free(p->len);
	p->text = NULL;
	p->len = NULL;
	p->n = 0;
}

static void parts__clear(struct parts *p)
{
	parts__clear_parts(p);
	free(p->id);
	memset(p, 0, sizeof(*p));
}

static void parts__add(struct parts *p, const rd_kafka_message_t *m,
		       uint64_t seq)
{
	p->seq = seq;
	p->text = xrealloc(p->text, (p->n + 1) * sizeof(*p->text));
	p->len = xrealloc(p->len, (p->n + 1) * sizeof(*p->len));
	p->text[p->n] = xrealloc(NULL, m->len ? m->len : 1);
	memcpy(p->text[p->n], m->payload, m->len);
	p->len[p->n++] = m->len;
}

/* Checkpoints begun and not yet whole: a few, since two members may
 * write at once (each leaving member writes one). */
#define PENDING_MAX 4

/* The pending checkpoint id continues, NULL if none; part 0 begins one,
 * in a free slot or the oldest's. */
static struct parts *pending_of(struct parts *pending, const char *id,
				uint64_t part)
{
	size_t oldest = 0;

	for (size_t i = 0; i < PENDING_MAX; i++)
		if (pending[i].id && !strcmp(pending[i].id, id))
			return &pending[i];
	if (part != 0)
		return NULL;
	for (size_t i = 0; i < PENDING_MAX; i++) {
		if (!pending[i].id) {
			oldest = i;
			break;
		}
		if (pending[i].seq < pending[oldest].seq)
			oldest = i;
	}
	parts__clear(&pending[oldest]);
	pending[oldest].id = xstrdup(id);
	return &pending[oldest];
}

/* One message read: it continues the checkpoint of its id (as its next
 * part), or begins one (part 0); a part out of order (one missing: its
 * writer gone) drops what its checkpoint had. A whole checkpoint moves
 * to *whole. */
static void read_part(struct parts *pending, struct parts *whole,
		      const rd_kafka_message_t *m, uint64_t seq)
{
	struct json_error jerr;
	struct json_value *v = json__parse(m->payload, m->len, &jerr);
	const char *id = v ? json__str(json__get(v, "id")) : NULL;
	struct parts *p = NULL;
	uint64_t part = 0, parts;

	if (id && json__u64(json__get(v, "part"), &part))
		p = pending_of(pending, id, part);
	if (p && part == 0)
		parts__clear_parts(p);
	if (p && part != p->n)
		parts__clear(p);
	else if (p)
		parts__add(p, m, seq);
	if (p && p->id && json__u64(json__get(v, "parts"), &parts) &&
	    parts == p->n) {
		parts__clear(whole);
		*whole = *p;
		memset(p, 0, sizeof(*p));
	}
	json__free(v);
}

static int add_merged(struct topo_merged *m, const struct json_value *v)
{
	const struct json_value *a = json__get(v, "merged");

	if (!a || a->type != JSON_ARRAY)
		return -1;
	m->merged_next = xrealloc(NULL, (a->arr.n ? a->arr.n : 1) *
						sizeof(*m->merged_next));
	m->nmerged = (int)a->arr.n;
	for (size_t i = 0; i < a->arr.n; i++) {
		int64_t partition, next;

		if (!json__i64(json__get(&a->arr.items[i], "partition"),
			       &partition) ||
		    !json__i64(json__get(&a->arr.items[i], "next"), &next) ||
		    partition != (int64_t)i)
			return -1;
		m->merged_next[i] = next;
	}
	return 0;
}

/* The last message's: where the merger starts in the partial topic, and
 * the topology offsets the deltas covered. */
static int add_positions(struct topo_merged *m, const struct json_value *v)
{
	uint64_t offsets = 0, twice = 0;

	if (add_merged(m, v))
		return -1;
	return coverage__add_json(m->covered, json__get(v, "covered"), &offsets,
				  &twice);
}

/* The whole checkpoint into m (new graph and coverage). */
static int apply(const struct parts *whole, struct topo_merged *m)
{
	int err = 0;

	for (size_t i = 0; i < whole->n && !err; i++) {
		struct json_error jerr;
		struct json_value *v =
			json__parse(whole->text[i], whole->len[i], &jerr);

		err = !v || topo__add_partial(m->graph, v) ? -1 : 0;
		if (!err && i + 1 == whole->n)
			err = add_positions(m, v);
		json__free(v);
	}
	return err;
}

int checkpoint__load(rd_kafka_t *consumer, const char *topic,
		     struct topo_merged *m, int timeout_ms)
{
	uint64_t until = mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct parts pending[PENDING_MAX] = { 0 }, whole = { 0 };
	rd_kafka_topic_partition_list_t *l;
	struct topo_merged got = { 0 };
	int64_t lo, hi, next = -1;
	rd_kafka_resp_err_t err;
	int ret = -1;

	err = rd_kafka_query_watermark_offsets(consumer, topic, 0, &lo, &hi,
					       timeout_ms);
	if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
	    (!err && hi <= lo))
		return 0;
	if (err)
		return -1;
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, 0)->offset = lo;
	rd_kafka_assign(consumer, l);
	rd_kafka_topic_partition_list_destroy(l);
	while (next < hi && mono_ns() < until) {
		rd_kafka_message_t *msg = rd_kafka_consumer_poll(consumer, 100);

		for (; msg; msg = rd_kafka_consumer_poll(consumer, 0)) {
			if (!msg->err && msg->offset >= next) {
				read_part(pending, &whole, msg,
					  (uint64_t)msg->offset);
				next = msg->offset + 1;
			}
			rd_kafka_message_destroy(msg);
		}
	}
	rd_kafka_assign(consumer, NULL);
	if (next < hi)
		goto out; /* not read to its end: maybe a later one */
	ret = 0;
	if (!whole.id)
		goto out;
	got.graph = topo__new();
	got.covered = coverage__new();
	if (apply(&whole, &got)) {
		topo__free(got.graph);
		coverage__free(got.covered);
		free(got.merged_next);
		ret = -1;
		goto out;
	}
	topo__free(m->graph);
	coverage__free(m->covered);
	free(m->merged_next);
	*m = got;
	ret = 1;
out:
	for (size_t i = 0; i < PENDING_MAX; i++)
		parts__clear(&pending[i]);
	parts__clear(&whole);
	return ret;
}
