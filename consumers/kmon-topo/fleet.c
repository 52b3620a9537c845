// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The two stages of kmon-topo --fleet (fleet.h). A partial is
 * {"kind":"topology_partial","ts":..,"node":..,"partition":P,"start":S,
 *  "next":N,<topo__partial_fields>}: partition P of <prefix>topology,
 * offsets S to N-1. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "consumers/common/kafka_group.h"
#include "fleet.h"
#include "graph.h"
#include "lib/clock.h"
#include "lib/json_parse.h"
#include "lib/record.h"
#include "lib/xalloc.h"

#define WHO "kmon-topo"
#define FLUSH_MS 30000
#define MAX_PROPS 80
/* Stage 2 has read every partial once it has heard nothing for this. */
#define QUIET_NS 1000000000ULL
#define LEAVE_MAX_NS (15ULL * 1000000000ULL)

/* What this member read of one partition since it was given it. */
struct segment {
	int32_t partition;
	int64_t start, next;
	struct topo_graph *g;
};

/* The last partial read of one segment, any member's. */
struct partial {
	int32_t partition;
	int64_t start, next;
	char *json;
	size_t len;
};

struct topo_fleet {
	struct kafka_member member; /* first: kafka_group.h */
	rd_kafka_t *reader; /* stage 1, in the group */
	rd_kafka_t *merger; /* stage 2, a group of its own */
	rd_kafka_t *producer;
	rd_kafka_topic_t *partial_topic;
	char topic[512], partial_name[512];
	const char *host;
	struct segment *segs;
	size_t nsegs;
	struct partial *partials;
	size_t npartials;
	uint64_t last_partial_ns;
	struct topo_fleet_counts c;
};

/* --- stage 1 --- */

static struct segment *segment__of(struct topo_fleet *f, int32_t partition,
				   int64_t offset)
{
	struct segment *s;

	for (size_t i = 0; i < f->nsegs; i++)
		if (f->segs[i].partition == partition)
			return &f->segs[i];
	f->segs = xrealloc(f->segs, (f->nsegs + 1) * sizeof(*f->segs));
	s = &f->segs[f->nsegs++];
	*s = (struct segment){ .partition = partition,
			       .start = offset,
			       .next = offset,
			       .g = topo__new() };
	return s;
}

static void write_partial(struct topo_fleet *f, const struct segment *s)
{
	char key[64];
	struct record r;
	int klen;

	record__init(&r);
	record__begin(&r, "topology_partial", clock_ns(CLOCK_REALTIME),
		      f->host);
	record__u64(&r, "partition", (uint64_t)s->partition);
	record__u64(&r, "start", (uint64_t)s->start);
	record__u64(&r, "next", (uint64_t)s->next);
	topo__partial_fields(s->g, &r);
	record__end(&r);
	klen = snprintf(key, sizeof(key), "%d/%lld", s->partition,
			(long long)s->start);
	if (rd_kafka_produce(f->partial_topic, RD_KAFKA_PARTITION_UA,
			     RD_KAFKA_MSG_F_COPY, r.json.buf, r.json.len, key,
			     klen, NULL))
		f->c.produce_failed++;
	else
		f->c.partials_written++;
	record__free(&r);
}

/* Commits, for every segment, the offset its partial ends at. */
static void commit_segments(struct topo_fleet *f)
{
	rd_kafka_topic_partition_list_t *l;

	if (!f->nsegs)
		return;
	l = rd_kafka_topic_partition_list_new((int)f->nsegs);
	for (size_t i = 0; i < f->nsegs; i++)
		rd_kafka_topic_partition_list_add(l, f->topic,
						  f->segs[i].partition)
			->offset = f->segs[i].next;
	if (rd_kafka_commit(f->reader, l, 0))
		f->c.commits_failed++;
	rd_kafka_topic_partition_list_destroy(l);
}

int topo_fleet__publish(struct topo_fleet *f)
{
	if (!f->producer)
		return -1; /* not made yet: nothing read either */
	for (size_t i = 0; i < f->nsegs; i++)
		write_partial(f, &f->segs[i]);
	if (rd_kafka_flush(f->producer, FLUSH_MS)) {
		/* not committed: the next owner reads it again */
		fprintf(stderr, "%s: partials not delivered in %d s\n", WHO,
			FLUSH_MS / 1000);
		return -1;
	}
	commit_segments(f);
	return 0;
}

static void drop_segments(struct topo_fleet *f)
{
	for (size_t i = 0; i < f->nsegs; i++)
		topo__free(f->segs[i].g);
	f->nsegs = 0;
}

/* Partitions going (all of them: eager rebalancing): their segments
 * are written and committed first, so the next owner starts where they
 * end. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *member)
{
	struct topo_fleet *f = member;

	f->c.rebalances++;
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		rd_kafka_assign(rk, parts);
		return;
	}
	topo_fleet__publish(f);
	drop_segments(f);
	rd_kafka_assign(rk, NULL);
}

static void read_record(struct topo_fleet *f, const rd_kafka_message_t *m)
{
	struct segment *s;
	char err[256];

	if (m->err)
		return; /* the end of a partition, or a topic not there yet */
	s = segment__of(f, m->partition, m->offset);
	if (m->offset < s->next)
		return; /* already in this segment */
	topo__add_json(s->g, m->payload, m->len, err, sizeof(err));
	s->next = m->offset + 1;
}

/* --- stage 2 --- */

static void keep_partial(struct topo_fleet *f, const rd_kafka_message_t *m)
{
	struct json_error jerr;
	struct json_value *v = json__parse(m->payload, m->len, &jerr);
	int64_t partition, start, next;
	struct partial *p = NULL;

	if (!v || !json__i64(json__get(v, "partition"), &partition) ||
	    !json__i64(json__get(v, "start"), &start) ||
	    !json__i64(json__get(v, "next"), &next)) {
		f->c.partials_rejected++;
		json__free(v);
		return;
	}
	json__free(v);
	f->c.partials_read++;
	for (size_t i = 0; i < f->npartials && !p; i++)
		if (f->partials[i].partition == partition &&
		    f->partials[i].start == start)
			p = &f->partials[i];
	if (!p) {
		f->partials = xrealloc(
			f->partials, (f->npartials + 1) * sizeof(*f->partials));
		p = &f->partials[f->npartials++];
		*p = (struct partial){ .partition = (int32_t)partition,
				       .start = start };
	} else if (next < p->next) {
		return; /* an older one, delivered again */
	}
	free(p->json);
	p->json = xrealloc(NULL, m->len);
	memcpy(p->json, m->payload, m->len);
	p->len = m->len;
	p->next = next;
}

static int partial_cmp(const void *a, const void *b)
{
	const struct partial *x = a, *y = b;

	if (x->partition != y->partition)
		return x->partition < y->partition ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

struct topo_graph *topo_fleet__graph(struct topo_fleet *f)
{
	struct topo_graph *g = topo__new();

	qsort(f->partials, f->npartials, sizeof(*f->partials), partial_cmp);
	f->c.segments = f->npartials;
	f->c.read_twice = 0;
	for (size_t i = 0; i < f->npartials; i++) {
		const struct partial *p = &f->partials[i], *prev = p - 1;
		struct json_error jerr;
		struct json_value *v = json__parse(p->json, p->len, &jerr);

		if (i && prev->partition == p->partition &&
		    prev->next > p->start)
			f->c.read_twice += (uint64_t)(prev->next - p->start);
		if (!v || topo__add_partial(g, v))
			f->c.partials_rejected++;
		json__free(v);
	}
	return g;
}

/* --- both --- */

void topo_fleet__poll(struct topo_fleet *f, int timeout_ms)
{
	rd_kafka_message_t *m;
	int n = 0;

	if (f->reader) {
		while (n++ < 2000 &&
		       (m = rd_kafka_consumer_poll(f->reader,
						   n == 1 ? timeout_ms : 0))) {
			read_record(f, m);
			rd_kafka_message_destroy(m);
		}
	}
	m = rd_kafka_consumer_poll(f->merger, f->reader ? 0 : timeout_ms);
	for (; m; m = rd_kafka_consumer_poll(f->merger, 0)) {
		if (!m->err) {
			keep_partial(f, m);
			f->last_partial_ns = mono_ns();
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_poll(f->producer, 0);
}

void topo_fleet__leave(struct topo_fleet *f)
{
	uint64_t since = mono_ns();

	if (f->reader) {
		topo_fleet__publish(f);
		rd_kafka_consumer_close(f->reader); /* revokes: on_rebalance */
		rd_kafka_destroy(f->reader);
		f->reader = NULL;
	}
	f->last_partial_ns = mono_ns();
	while (mono_ns() - f->last_partial_ns < QUIET_NS &&
	       mono_ns() - since < LEAVE_MAX_NS)
		topo_fleet__poll(f, 100);
}

/* Stage 2 reads every partial, from the first: a group of its own that
 * commits nothing. */
static rd_kafka_t *merger__new(const struct topo_fleet_opts *o)
{
	const char *props[MAX_PROPS][2];
	char group[512];
	int n = 0;

	snprintf(group, sizeof(group), "%s.merge.%s.%d", o->group, o->host,
		 (int)getpid());
	for (int i = 0; i < o->nprops && n < MAX_PROPS - 1; i++, n++) {
		props[n][0] = o->props[i][0];
		props[n][1] = o->props[i][1];
	}
	props[n][0] = "enable.auto.commit";
	props[n++][1] = "false";
	return kafka_group__new(&(struct kafka_group_opts){
		.who = WHO,
		.brokers = o->brokers,
		.group = group,
		.props = (const char *const(*)[2])props,
		.nprops = n });
}

static rd_kafka_t *producer__new(const char *brokers)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;

	/* a partial is one graph: it may be large */
	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr,
			      sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "enable.idempotence", "false", errstr,
			      sizeof(errstr))) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "%s: %s\n", WHO, errstr);
		return NULL;
	}
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!rk) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "%s: %s\n", WHO, errstr);
	}
	return rk;
}

struct topo_fleet *topo_fleet__new(const struct topo_fleet_opts *o)
{
	struct topo_fleet *f = xrealloc(NULL, sizeof(*f));

	memset(f, 0, sizeof(*f));
	f->member.who = WHO;
	f->host = o->host;
	snprintf(f->topic, sizeof(f->topic), "%stopology", o->prefix);
	snprintf(f->partial_name, sizeof(f->partial_name),
		 "%s%s.topology_partial", o->prefix, o->group);
	f->reader = kafka_group__new(
		&(struct kafka_group_opts){ .who = WHO,
					    .member = &f->member,
					    .rebalance = on_rebalance,
					    .brokers = o->brokers,
					    .group = o->group,
					    .props = o->props,
					    .nprops = o->nprops });
	f->merger = merger__new(o);
	f->producer = producer__new(o->brokers);
	if (!f->reader || !f->merger || !f->producer)
		goto fail;
	f->partial_topic =
		rd_kafka_topic_new(f->producer, f->partial_name, NULL);
	if (kafka_group__subscribe(f->reader, WHO, f->topic) ||
	    kafka_group__subscribe(f->merger, WHO, f->partial_name))
		goto fail;
	fprintf(stderr, "%s: reading %s as group %s, merging %s\n", WHO,
		f->topic, o->group, f->partial_name);
	return f;
fail:
	topo_fleet__free(f);
	return NULL;
}

const struct topo_fleet_counts *topo_fleet__counts(const struct topo_fleet *f)
{
	return &f->c;
}

void topo_fleet__free(struct topo_fleet *f)
{
	if (!f)
		return;
	if (f->reader) {
		rd_kafka_consumer_close(f->reader);
		rd_kafka_destroy(f->reader);
	}
	drop_segments(f);
	free(f->segs);
	if (f->merger) {
		rd_kafka_consumer_close(f->merger);
		rd_kafka_destroy(f->merger);
	}
	if (f->partial_topic)
		rd_kafka_topic_destroy(f->partial_topic);
	if (f->producer) {
		rd_kafka_flush(f->producer, FLUSH_MS);
		rd_kafka_destroy(f->producer);
	}
	for (size_t i = 0; i < f->npartials; i++)
		free(f->partials[i].json);
	free(f->partials);
	free(f);
}
