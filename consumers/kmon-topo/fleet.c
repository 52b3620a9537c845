// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The two stages of kmon-topo --fleet (fleet.h). A delta is
 * {"kind":"topology_partial","ts":..,"node":..,"ranges":[{"partition":P,
 *  "start":S,"next":N},..],<topo__partial_fields>}: what its member read
 * of offsets S to N-1 of each partition P of <prefix>topology. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "checkpoint.h"
#include "consumers/common/kafka_group.h"
#include "coverage.h"
#include "fleet.h"
#include "graph.h"
#include "lib/clock.h"
#include "lib/json_parse.h"
#include "lib/record.h"
#include "lib/xalloc.h"

#define WHO "kmon-topo"
#define FLUSH_MS 30000
/* Below FLUSH_MS: once flushed, every delta was delivered or failed. */
#define DELIVERY_TIMEOUT "20000"
#define MAX_PROPS 80
/* A delta's messages: well below message.max.bytes (1 MB by default). */
#define DELTA_PART_BYTES (512 * 1024)
/* Stage 2 has read every delta once it has heard nothing for this. */
#define QUIET_NS 1000000000ULL
#define LEAVE_MAX_NS (15ULL * 1000000000ULL)
/* How long a member given partitions reads deltas to learn where the
 * last ones end, before it falls back on the committed offsets. */
#define CATCH_UP_MS 10000
/* How long a member that starts reads the checkpoint topic. */
#define CHECKPOINT_LOAD_MS 10000
#define METADATA_MS 2000

/* What the current delta covers of one partition this member holds. */
struct range {
	int32_t partition;
	int64_t start, next;
};

struct topo_fleet {
	struct kafka_member member; /* first: kafka_group.h */
	rd_kafka_t *reader; /* stage 1, in the group */
	rd_kafka_t *merger; /* stage 2, a group of its own */
	rd_kafka_t *producer;
	rd_kafka_topic_t *partial_topic;
	rd_kafka_topic_t *checkpoint_topic;
	char topic[512], partial_name[512], checkpoint_name[512];
	const char *host;
	struct topo_graph *delta; /* read since the last delta delivered */
	struct range *ranges;
	size_t nranges;
	uint64_t undelivered; /* delivery reports that failed */
	struct topo_graph *graph; /* every delta read */
	struct topo_coverage *covered;
	rd_kafka_topic_t *merged_topic; /* the partial topic, to the merger */
	int64_t *merged_next; /* per partition of it: the next offset */
	int nmerged; /* its partitions assigned to the merger */
	int nloaded; /* of merged_next: where the checkpoint loaded ended */
	bool holds_first; /* partition 0 of the topology topic: checkpoints */
	uint64_t checkpoints; /* written by this member */
	uint64_t last_partial_ns;
	struct topo_fleet_counts c;
};

/* stage 2's, which stage 1 waits for */
static void merger__follow(struct topo_fleet *f);
static int merger__catch_up(struct topo_fleet *f, int timeout_ms);

/* --- stage 1 --- */

static struct range *range__of(struct topo_fleet *f, int32_t partition,
			       int64_t offset)
{
	struct range *r;

	for (size_t i = 0; i < f->nranges; i++)
		if (f->ranges[i].partition == partition)
			return &f->ranges[i];
	f->ranges = xrealloc(f->ranges, (f->nranges + 1) * sizeof(*f->ranges));
	r = &f->ranges[f->nranges++];
	*r = (struct range){ .partition = partition,
			     .start = offset,
			     .next = offset };
	return r;
}

static bool delta__empty(const struct topo_fleet *f)
{
	for (size_t i = 0; i < f->nranges; i++)
		if (f->ranges[i].next > f->ranges[i].start)
			return false;
	return true;
}

/* The offsets the delta covers; none (an empty array) but in its last
 * message. */
static void json_ranges(const struct topo_fleet *f, struct record *r, bool last)
{
	record__array_begin(r, "ranges");
	for (size_t i = 0; last && i < f->nranges; i++) {
		const struct range *g = &f->ranges[i];

		if (g->next == g->start)
			continue;
		record__object_begin(r, NULL);
		record__u64(r, "partition", (uint64_t)g->partition);
		record__u64(r, "start", (uint64_t)g->start);
		record__u64(r, "next", (uint64_t)g->next);
		record__object_end(r);
	}
	record__array_end(r);
}

/* The delta in messages of about DELTA_PART_BYTES, the offsets it covers
 * in the last: the edges of a delta cut short (its writer gone between
 * two messages) are merged, its offsets are not, so its successor reads
 * them again, uncounted. */
static void write_delta(struct topo_fleet *f)
{
	size_t edge = 0;
	bool last;

	do {
		struct record r;

		record__init(&r);
		record__begin(&r, "topology_partial", clock_ns(CLOCK_REALTIME),
			      f->host);
		last = topo__partial_fields(f->delta, &r, &edge,
					    DELTA_PART_BYTES);
		json_ranges(f, &r, last);
		record__end(&r);
		/* no key: deltas need no order, spread over partitions */
		if (rd_kafka_produce(f->partial_topic, RD_KAFKA_PARTITION_UA,
				     RD_KAFKA_MSG_F_COPY, r.json.buf,
				     r.json.len, NULL, 0, NULL))
			f->c.produce_failed++;
		else
			f->c.partials_written++;
		record__free(&r);
	} while (!last);
}

/* Commits, for every partition, the offset the delta ends at. */
static void commit_ranges(struct topo_fleet *f)
{
	rd_kafka_topic_partition_list_t *l;

	if (!f->nranges)
		return;
	l = rd_kafka_topic_partition_list_new((int)f->nranges);
	for (size_t i = 0; i < f->nranges; i++)
		rd_kafka_topic_partition_list_add(l, f->topic,
						  f->ranges[i].partition)
			->offset = f->ranges[i].next;
	if (rd_kafka_commit(f->reader, l, 0))
		f->c.commits_failed++;
	rd_kafka_topic_partition_list_destroy(l);
}

/* The delta delivered: the next one starts empty, where it ended. */
static void delta__restart(struct topo_fleet *f)
{
	for (size_t i = 0; i < f->nranges; i++)
		f->ranges[i].start = f->ranges[i].next;
	topo__free(f->delta);
	f->delta = topo__new();
}

int topo_fleet__publish(struct topo_fleet *f)
{
	uint64_t failed = f->undelivered, refused = f->c.produce_failed;

	if (!f->producer)
		return -1; /* not made yet: nothing read either */
	if (!f->nmerged)
		merger__follow(f); /* the partial topic made since */
	if (delta__empty(f))
		return 0;
	write_delta(f);
	if (rd_kafka_flush(f->producer, FLUSH_MS)) {
		/* not committed: counted as read twice should it arrive */
		fprintf(stderr, "%s: delta not delivered in %d s\n", WHO,
			FLUSH_MS / 1000);
		return -1;
	}
	if (f->undelivered != failed || f->c.produce_failed != refused)
		return -1; /* kept: the next delta holds these records too */
	commit_ranges(f);
	delta__restart(f);
	return 0;
}

static void drop_delta(struct topo_fleet *f)
{
	topo__free(f->delta);
	f->delta = topo__new();
	f->nranges = 0;
}

/* Partitions given: each starts where the deltas merged so far end, read
 * to the end of the partial topic first (every delta of the partitions'
 * last owners is there: they wrote them before giving them up). The
 * committed offsets only when none covers it, or the partial topic
 * cannot be read: a commit may be refused in a rebalance, a delta's
 * delivery never is without a delta being written again. */
static void assign_at_covered_ends(struct topo_fleet *f, rd_kafka_t *rk,
				   rd_kafka_topic_partition_list_t *parts)
{
	for (int i = 0; i < parts->cnt; i++)
		if (parts->elems[i].partition == 0)
			f->holds_first = true;
	if (merger__catch_up(f, CATCH_UP_MS) == 0) {
		for (int i = 0; i < parts->cnt; i++) {
			rd_kafka_topic_partition_t *p = &parts->elems[i];
			int64_t end = coverage__end(f->covered, p->partition);

			if (end >= 0)
				p->offset = end;
		}
	} else {
		f->c.catch_up_failed++;
	}
	rd_kafka_assign(rk, parts);
}

/* Partitions going (all of them: eager rebalancing): the delta is
 * written (and committed) first, so the next owner starts where it
 * ends; one not delivered is dropped: the next owner reads it again. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *member)
{
	struct topo_fleet *f = member;

	f->c.rebalances++;
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		assign_at_covered_ends(f, rk, parts);
		return;
	}
	topo_fleet__publish(f);
	drop_delta(f);
	f->holds_first = false;
	rd_kafka_assign(rk, NULL);
}

static void read_record(struct topo_fleet *f, const rd_kafka_message_t *m)
{
	struct range *r;
	char err[256];

	if (m->err)
		return; /* the end of a partition, or a topic not there yet */
	r = range__of(f, m->partition, m->offset);
	if (m->offset < r->next)
		return; /* already in a delta */
	topo__add_json(f->delta, m->payload, m->len, err, sizeof(err));
	r->next = m->offset + 1;
}

/* --- stage 2 --- */

/* The offsets of the delta's ranges, counted as merged (or twice). */
static int cover_ranges(struct topo_fleet *f, const struct json_value *v)
{
	return coverage__add_json(f->covered, json__get(v, "ranges"),
				  &f->c.offsets, &f->c.read_twice);
}

static void merge_delta(struct topo_fleet *f, const rd_kafka_message_t *m)
{
	struct json_error jerr;
	struct json_value *v = json__parse(m->payload, m->len, &jerr);

	if (!v || cover_ranges(f, v) || topo__add_partial(f->graph, v))
		f->c.partials_rejected++;
	else
		f->c.partials_read++;
	json__free(v);
}

/* Every partition of the partial topic assigned to the merger (from the
 * first offset; those it had where it was): there may be more now. */
static void merger__follow(struct topo_fleet *f)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_topic_partition_list_t *l;
	int n;

	if (rd_kafka_metadata(f->merger, 0, f->merged_topic, &md, METADATA_MS))
		return;
	n = md->topic_cnt == 1 && !md->topics[0].err ?
		    md->topics[0].partition_cnt :
		    0;
	rd_kafka_metadata_destroy(md);
	if (n <= f->nmerged)
		return;
	f->merged_next =
		xrealloc(f->merged_next, (n > f->nloaded ? n : f->nloaded) *
						 sizeof(*f->merged_next));
	l = rd_kafka_topic_partition_list_new(n);
	for (int p = 0; p < n; p++) {
		if (p >= f->nmerged && p >= f->nloaded)
			f->merged_next[p] = RD_KAFKA_OFFSET_BEGINNING;
		rd_kafka_topic_partition_list_add(l, f->partial_name, p)
			->offset = f->merged_next[p];
	}
	f->nmerged = n;
	rd_kafka_assign(f->merger, l);
	rd_kafka_topic_partition_list_destroy(l);
}

static void merger__poll(struct topo_fleet *f, int timeout_ms)
{
	rd_kafka_message_t *m = rd_kafka_consumer_poll(f->merger, timeout_ms);

	for (; m; m = rd_kafka_consumer_poll(f->merger, 0)) {
		/* the partial topic's (not a checkpoint's left from
		 * checkpoint__load) */
		if (!m->err && m->partition < f->nmerged &&
		    !strcmp(rd_kafka_topic_name(m->rkt), f->partial_name)) {
			merge_delta(f, m);
			f->merged_next[m->partition] = m->offset + 1;
			f->last_partial_ns = mono_ns();
		}
		rd_kafka_message_destroy(m);
	}
}

/* Whether the merger has read every partition of the partial topic up
 * to end (lo: where what the topic keeps begins). */
static bool merger__read_to(const struct topo_fleet *f, const int64_t *lo,
			    const int64_t *end)
{
	for (int p = 0; p < f->nmerged; p++) {
		int64_t next = f->merged_next[p];

		if (end[p] > lo[p] && (next < 0 || next < end[p]))
			return false;
	}
	return true;
}

/* Where each partition of the partial topic begins (what it keeps) and
 * ends, asked in one request each (ListOffsets, times -2 and -1): the
 * beginnings, then the ends (nmerged each, one allocation); NULL when
 * they could not be read. */
static int64_t *merger__ends(struct topo_fleet *f)
{
	int64_t *lo = xrealloc(NULL, 2 * f->nmerged * sizeof(*lo));
	int64_t *end = lo + f->nmerged;

	for (int i = 0; i < 2; i++) {
		int64_t *out = i ? end : lo;
		rd_kafka_topic_partition_list_t *l =
			rd_kafka_topic_partition_list_new(f->nmerged);
		int err;

		for (int p = 0; p < f->nmerged; p++)
			rd_kafka_topic_partition_list_add(l, f->partial_name, p)
				->offset = i ? RD_KAFKA_OFFSET_END :
					       RD_KAFKA_OFFSET_BEGINNING;
		err = rd_kafka_offsets_for_times(f->merger, l, METADATA_MS) ?
			      -1 :
			      0;
		for (int k = 0; k < l->cnt && !err; k++) {
			const rd_kafka_topic_partition_t *e = &l->elems[k];

			if (e->err || e->partition >= f->nmerged)
				err = -1;
			else
				out[e->partition] = e->offset;
		}
		rd_kafka_topic_partition_list_destroy(l);
		if (err) {
			free(lo);
			return NULL;
		}
	}
	return lo;
}

/* Reads the partial topic up to where it ends now. Returns 0, or -1
 * when it cannot be read to the end in timeout_ms. */
static int merger__catch_up(struct topo_fleet *f, int timeout_ms)
{
	uint64_t until = mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int64_t *lo, *end;
	int err;

	merger__follow(f);
	if (!f->nmerged || !(lo = merger__ends(f)))
		return -1;
	end = lo + f->nmerged;
	while (!merger__read_to(f, lo, end) && mono_ns() < until)
		merger__poll(f, 100);
	err = merger__read_to(f, lo, end) ? 0 : -1;
	free(lo);
	return err;
}

struct topo_graph *topo_fleet__graph(struct topo_fleet *f)
{
	return f->graph;
}

/* --- checkpoints --- */

/* The graph and where it was merged to: a partition of the partial
 * topic not followed yet starts where the checkpoint loaded said. */
static struct topo_merged merged_of(struct topo_fleet *f)
{
	return (struct topo_merged){ .graph = f->graph,
				     .covered = f->covered,
				     .merged_next = f->merged_next,
				     .nmerged = f->nmerged > f->nloaded ?
							f->nmerged :
							f->nloaded };
}

/* The msg_opaque of a checkpoint's messages: their delivery reports
 * are not a delta's. */
static char checkpoint_msg;

int topo_fleet__checkpoint(struct topo_fleet *f, bool leaving)
{
	struct topo_merged m = merged_of(f);
	char id[640];
	int n;

	/* one member writes them, partition 0's; and each that leaves */
	if ((!f->holds_first && !leaving) || !f->producer)
		return 0;
	snprintf(id, sizeof(id), "%s.%d.%llu", f->host, (int)getpid(),
		 (unsigned long long)++f->checkpoints);
	n = checkpoint__write(f->checkpoint_topic, f->host, id, &m,
			      DELTA_PART_BYTES, &checkpoint_msg);
	if (n < 0) {
		f->c.checkpoints_failed++;
		return -1;
	}
	f->c.checkpoints_written++;
	return 0;
}

/* The last whole checkpoint, before the merger reads a delta: the graph,
 * the coverage and where the merger starts in the partial topic. */
static void load_checkpoint(struct topo_fleet *f)
{
	struct topo_merged m = merged_of(f);
	int32_t partition;
	int64_t start, next;
	int got;

	got = checkpoint__load(f->merger, f->checkpoint_name, &m,
			       CHECKPOINT_LOAD_MS);
	if (got < 0) {
		fprintf(stderr,
			"%s: %s not read: merging every delta from the "
			"first\n",
			WHO, f->checkpoint_name);
		return;
	}
	if (!got)
		return;
	f->graph = m.graph;
	f->covered = m.covered;
	f->merged_next = m.merged_next;
	f->nloaded = m.nmerged;
	for (size_t k = 0;
	     coverage__span(f->covered, k, &partition, &start, &next); k++)
		f->c.offsets += (uint64_t)(next - start);
	f->c.checkpoint_loaded = 1;
	fprintf(stderr, "%s: checkpoint loaded from %s (%llu offsets)\n", WHO,
		f->checkpoint_name, (unsigned long long)f->c.offsets);
}

/* Whether the partial topic still holds every delta the graph lacks:
 * where its retention removed some (a group stopped for longer than it
 * keeps, or no checkpoint recent enough), the graph misses what they
 * held, and says so. */
static void check_kept(struct topo_fleet *f)
{
	int64_t *lo;

	if (!f->nmerged || !(lo = merger__ends(f)))
		return;
	for (int p = 0; p < f->nmerged; p++) {
		int64_t want = f->merged_next[p] < 0 ? 0 : f->merged_next[p];

		if (lo[p] <= want)
			continue;
		f->c.deltas_gone += (uint64_t)(lo[p] - want);
		fprintf(stderr,
			"%s: %s[%d] begins at offset %lld, the graph needs it "
			"from %lld: the deltas between are gone, and what they "
			"held is missing\n",
			WHO, f->partial_name, p, (long long)lo[p],
			(long long)want);
	}
	free(lo);
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
	merger__poll(f, f->reader ? 0 : timeout_ms);
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

/* Stage 2 reads every delta, from the first: a consumer that is given
 * every partition of the partial topic (merger__follow), in no group. */
static rd_kafka_t *merger__new(const struct topo_fleet_opts *o)
{
	const char *props[MAX_PROPS][2];
	char group[512];
	int n = 0;

	/* librdkafka wants a group; it joins none */
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

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
			void *member)
{
	struct topo_fleet *f = member;

	(void)rk;
	if (m->err && m->_private == &checkpoint_msg)
		f->c.checkpoints_failed++;
	else if (m->err)
		f->undelivered++;
}

static rd_kafka_t *producer__new(struct topo_fleet *f, const char *brokers)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;

	/* a delta is the edges read in one interval: it may be large */
	rd_kafka_conf_set_opaque(conf, f);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr,
			      sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "message.timeout.ms", DELIVERY_TIMEOUT,
			      errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof(errstr)) ||
	    rd_kafka_conf_set(conf, "enable.idempotence", "true", errstr,
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
	f->delta = topo__new();
	f->graph = topo__new();
	f->covered = coverage__new();
	snprintf(f->topic, sizeof(f->topic), "%stopology", o->prefix);
	snprintf(f->partial_name, sizeof(f->partial_name),
		 "%s%s.topology_partial", o->prefix, o->group);
	snprintf(f->checkpoint_name, sizeof(f->checkpoint_name),
		 "%s%s.topology_checkpoint", o->prefix, o->group);
	f->reader = kafka_group__new(
		&(struct kafka_group_opts){ .who = WHO,
					    .member = &f->member,
					    .rebalance = on_rebalance,
					    .brokers = o->brokers,
					    .group = o->group,
					    .props = o->props,
					    .nprops = o->nprops });
	f->merger = merger__new(o);
	f->producer = producer__new(f, o->brokers);
	if (!f->reader || !f->merger || !f->producer)
		goto fail;
	f->partial_topic =
		rd_kafka_topic_new(f->producer, f->partial_name, NULL);
	f->merged_topic = rd_kafka_topic_new(f->merger, f->partial_name, NULL);
	f->checkpoint_topic =
		rd_kafka_topic_new(f->producer, f->checkpoint_name, NULL);
	load_checkpoint(f);
	merger__follow(f);
	check_kept(f);
	if (kafka_group__subscribe(f->reader, WHO, f->topic))
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
	topo__free(f->delta);
	free(f->ranges);
	if (f->merged_topic)
		rd_kafka_topic_destroy(f->merged_topic);
	free(f->merged_next);
	if (f->merger) {
		rd_kafka_consumer_close(f->merger);
		rd_kafka_destroy(f->merger);
	}
	if (f->partial_topic)
		rd_kafka_topic_destroy(f->partial_topic);
	if (f->checkpoint_topic)
		rd_kafka_topic_destroy(f->checkpoint_topic);
	if (f->producer) {
		rd_kafka_flush(f->producer, FLUSH_MS);
		rd_kafka_destroy(f->producer);
	}
	topo__free(f->graph);
	coverage__free(f->covered);
	free(f);
}
