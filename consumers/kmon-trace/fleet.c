// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The two stages share one producer; each has its own consumer, group
 * and thread: stage 1 runs in a thread of its own, stage 2 in the
 * caller's (main's, which writes the traces), so that each stage has a
 * core where there are two. They share nothing else but the counts,
 * which stage 1 copies out after each batch. Messages this member
 * writes:
 *  - <prefix><group>.span: kmond's tcp records as they are (key: the
 *    trace, 32 hex), and {"kind":"trace_move","from":T,"to":T} (key:
 *    from); in bundles (bundle.h), one message for what a stage's
 *    batch sends to a partition;
 *  - <prefix><group>.exchange: {"kind":"exchange_end","key":N,"trace":T,
 *    "resp_seq":N,"client":B}, an end handed over (key: req_seq, sent to
 *    the partition it was read from), then {"kind":"exchange_mark",
 *    "next":OFFSET}: how far this member read that partition of
 *    <prefix>tcp. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "bundle.h"
#include "consumers/common/kafka_group.h"
#include "consumers/common/reader_clock.h"
#include "exchanges.h"
#include "fleet.h"
#include "forwards.h"
#include "lib/clock.h"
#include "lib/json_parse.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define WHO "kmon-trace"
/* Messages read from one consumer before turning to the other. */
#define POLL_BATCH 2000
/* Forwards kept: a moved trace's late spans follow it. */
#define FORWARDS_MAX (1u << 20)
/* How long a rebalance waits for what it hands over to be delivered. */
#define HANDOVER_FLUSH_MS 30000
/* How long a partition of <prefix>tcp newly assigned waits for its last
 * owner's mark (a first owner has none; a killed one wrote none). */
#define MARK_WAIT_NS (3ULL * 1000000000ULL)
#define MAX_AWAITING 1024
/* How every trace_move begins (gather() tells them from spans so). */
#define MOVE_PREFIX "{\"kind\":\"trace_move\","

/* Each stage's own, summed when printed. */
struct fleet_counts {
	uint64_t taken_over; /* ends read from <prefix><group>.exchange */
	uint64_t spans_routed; /* sent to a trace their own moved under */
	uint64_t moves_in, moves_repeated, traces_moved, spans_moved;
	uint64_t spans_forwarded;
	uint64_t spans_kept; /* moved or forwarded to a partition read here */
	uint64_t traces_handed_over, spans_handed_over, forwards_handed_over;
	uint64_t rebalances, produce_failed, rejected;
	uint64_t spans_repeated; /* read again after a rebalance: dropped */
	uint64_t bundles_in; /* bundles read (stage 2) */
	uint64_t marked; /* partitions a mark moved past what was done */
	uint64_t unmarked; /* partitions taken with no mark in time */
};

struct stage {
	struct kafka_member member; /* first: kafka_group.h */
	struct fleet *f;
	rd_kafka_t *rk;
	/* its windows' clock: stage 1's ends and routes, stage 2's traces
	 * and forwards (reader_clock.h) */
	struct reader_clock *clock;
	void (*hand_over)(struct stage *st);
	/* Messages done but not committed (a rebalance refused the
	 * commit): their next owner may read them again. */
	bool dirty;
	/* partitions being revoked, by number (the topics of a stage are
	 * co-partitioned) */
	bool *revoked;
	int nrevoked;
	/* what it sends to <prefix><group>.span, until the end of its
	 * batch (poll_stage) or a rebalance's hand-over */
	struct bundles *bundles;
	struct strbuf buf;
	struct fleet_counts c;
};

/* Stage 1's counts as of its last batch, for the caller's thread. */
struct join_counts {
	pthread_mutex_t lock;
	struct fleet_counts c;
	struct exchange_counts x;
};

struct fleet {
	struct stage join, gather; /* stages 1 and 2 */
	pthread_t join_thread;
	bool join_running;
	atomic_bool join_stop;
	/* stage 1 behind what it reads: stage 2 waits on it */
	atomic_bool join_behind;
	struct join_counts shown;
	rd_kafka_t *producer;
	rd_kafka_topic_t *span_topic, *exchange_topic;
	char tcp_name[256], span_name[256], exchange_name[256];
	struct traces *traces;
	struct exchanges *exchanges;
	struct forwards *forwards; /* stage 2's */
	/* Stage 1's moves (from the server's trace to the caller's), each
	 * to where the caller's had gone: a record of a trace that moved
	 * goes straight to where the trace went. */
	struct forwards *routes;
	/* <prefix><group>.span's partitions, and those stage 2 reads now:
	 * a span it sends on to one of these it keeps, as if read back. */
	int span_partitions;
	bool *gathering;
	fleet_read_fn read;
	struct json_scan_keys move_keys; /* a trace_move's */
	void *ctx;
	/* partitions of <prefix>tcp paused until their last owner's mark */
	struct {
		int32_t partition;
		uint64_t since_ns;
	} awaiting[MAX_AWAITING];
	int nawaiting;
	char name[2048];
};

/* Topic indexes of the stages' clocks (fleet__open). */
enum { CLOCK_TCP, CLOCK_EXCHANGE };
enum { CLOCK_SPAN };

/* --- producing --- */

static void produce(struct stage *st, rd_kafka_topic_t *rkt, int32_t partition,
		    const char *key, size_t klen, const char *val, size_t vlen)
{
	struct fleet *f = st->f;
	rd_kafka_resp_err_t err;

	for (;;) {
		err = rd_kafka_producev(
			f->producer, RD_KAFKA_V_RKT(rkt),
			RD_KAFKA_V_PARTITION(partition),
			RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			RD_KAFKA_V_KEY(key, klen),
			RD_KAFKA_V_VALUE((void *)val, vlen), RD_KAFKA_V_END);
		if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
			break;
		/* a consumer may wait: the next stage reads it anyway */
		rd_kafka_poll(f->producer, 10);
	}
	if (err)
		st->c.produce_failed++;
}

/* The partition of <prefix><group>.span a trace's spans go to, by the
 * trace's 32 hex: the producer's own partitioner, called here so that
 * stage 2 knows which spans it sends on come back to it, and a bundle
 * knows its partition. */
static int32_t key_partition(const struct fleet *f, const char *hex)
{
	return rd_kafka_msg_partitioner_consistent_random(
		f->span_topic, hex, 32, f->span_partitions, NULL, NULL);
}

static int32_t span_partition(const struct fleet *f, struct trace_id key,
			      char hex[33])
{
	span__hex128(key, hex);
	return key_partition(f, hex);
}

/* To <prefix><group>.span under key (a trace, 32 hex): at partition,
 * or key's (RD_KAFKA_PARTITION_UA); into the stage's bundle, sent at
 * the end of its batch (poll_stage) or hand-over (on_rebalance). */
static void produce_to_span(struct stage *st, int32_t partition,
			    const char *key, const char *val, size_t vlen)
{
	struct fleet *f = st->f;

	if (partition == RD_KAFKA_PARTITION_UA)
		partition = key_partition(f, key);
	if (!st->bundles ||
	    !bundles__add(st->bundles, partition, key, 32, val, vlen))
		produce(st, f->span_topic, partition, key, 32, val, vlen);
}

static void send_bundle(int32_t partition, const char *value, size_t len,
			void *ctx)
{
	struct stage *st = ctx;

	produce(st, st->f->span_topic, partition, BUNDLE_KEY,
		sizeof(BUNDLE_KEY) - 1, value, len);
}

static void produce_span(struct stage *st, int32_t partition,
			 struct trace_id key, const char *val, size_t vlen)
{
	char hex[33];

	span__hex128(key, hex);
	produce_to_span(st, partition, hex, val, vlen);
}

static void produce_move(struct stage *st, int32_t partition,
			 struct trace_id from, struct trace_id to)
{
	char a[33], b[33];

	span__hex128(from, a);
	span__hex128(to, b);
	strbuf__reset(&st->buf);
	strbuf__addf(&st->buf, MOVE_PREFIX "\"from\":\"%s\",\"to\":\"%s\"}", a,
		     b);
	produce_to_span(st, partition, a, st->buf.buf, st->buf.len);
}

/* The move goes to where the caller's trace went as far as this member
 * knows, so that the spans moved take one step, not one a hop; a step
 * further that another member knows is stage 2's (its forwards). */
static void on_move(struct trace_id from, struct trace_id to, void *ctx)
{
	struct forward route = { .from = from, .partition = -1 };
	struct fleet *f = ctx;

	route.to = forwards__resolve(f->routes, to);
	if (trace_id__eq(route.to, from))
		route.to = to; /* a cycle: stage 2 takes it as it came */
	else
		forwards__add(f->routes, &route,
			      reader_clock__now(f->join.clock));
	produce_move(&f->join, RD_KAFKA_PARTITION_UA, from, route.to);
}

/* --- rebalancing --- */

static bool is_revoked(int32_t partition, void *ctx)
{
	struct stage *st = ctx;

	return partition >= 0 && partition < st->nrevoked &&
	       st->revoked[partition];
}

static void hand_over_end(const void *end, void *ctx)
{
	const struct exchange_end *e = end;
	struct stage *st = ctx;
	char hex[33], key[16];
	int klen;

	span__hex128(e->trace, hex);
	klen = snprintf(key, sizeof(key), "%u", (unsigned)(e->key >> 16));
	strbuf__reset(&st->buf);
	strbuf__addf(&st->buf,
		     "{\"kind\":\"exchange_end\",\"key\":%llu,\"trace\":\"%s\","
		     "\"resp_seq\":%u,\"client\":%s}",
		     (unsigned long long)e->key, hex, e->resp_seq,
		     e->client ? "true" : "false");
	produce(st, st->f->exchange_topic, e->partition, key, klen, st->buf.buf,
		st->buf.len);
}

/* After the ends of a partition of <prefix>tcp, its mark: the offset
 * this member read it up to. Its next owner starts there, even when
 * the commit was refused (a rebalance in progress): what was read here
 * is not read again, its spans not sent on twice. */
static void mark_read_up_to(struct fleet *f, int32_t partition)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new(1);
	int64_t next;

	rd_kafka_topic_partition_list_add(l, f->tcp_name, partition);
	rd_kafka_position(f->join.rk, l);
	next = l->elems[0].err ? RD_KAFKA_OFFSET_INVALID : l->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(l);
	strbuf__reset(&f->join.buf);
	strbuf__addf(&f->join.buf, "{\"kind\":\"exchange_mark\",\"next\":%lld}",
		     (long long)next);
	produce(&f->join, f->exchange_topic, partition, NULL, 0,
		f->join.buf.buf, f->join.buf.len);
}

static void hand_over_ends(struct stage *st)
{
	struct fleet *f = st->f;
	int32_t p;

	exchanges__hand_over(f->exchanges, is_revoked, hand_over_end, st);
	for (p = 0; p < st->nrevoked; p++)
		if (st->revoked[p])
			mark_read_up_to(f, p);
	f->nawaiting = 0;
}

static void set_paused(struct fleet *f, int32_t partition, bool paused)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new(1);

	rd_kafka_topic_partition_list_add(l, f->tcp_name, partition);
	if (paused)
		rd_kafka_pause_partitions(f->join.rk, l);
	else
		rd_kafka_resume_partitions(f->join.rk, l);
	rd_kafka_topic_partition_list_destroy(l);
}

/* New partitions of <prefix>tcp wait for their last owner's mark. */
static void await_marks(struct fleet *f,
			const rd_kafka_topic_partition_list_t *parts)
{
	int i;

	for (i = 0; i < parts->cnt && f->nawaiting < MAX_AWAITING; i++) {
		if (strcmp(parts->elems[i].topic, f->tcp_name) != 0)
			continue;
		f->awaiting[f->nawaiting].partition = parts->elems[i].partition;
		f->awaiting[f->nawaiting++].since_ns = mono_ns();
		set_paused(f, parts->elems[i].partition, true);
	}
}

static void stop_awaiting(struct fleet *f, int i)
{
	set_paused(f, f->awaiting[i].partition, false);
	f->awaiting[i] = f->awaiting[--f->nawaiting];
}

static int awaiting_index(const struct fleet *f, int32_t partition)
{
	int i;

	for (i = 0; i < f->nawaiting; i++)
		if (f->awaiting[i].partition == partition)
			return i;
	return -1;
}

/* A mark of a partition still paused: read it from there on, unless the
 * group's committed offset is past it. Of several marks (rebalances
 * whose commits were refused) the last is the furthest. */
static void take_mark(struct fleet *f, int32_t partition, int64_t next)
{
	rd_kafka_topic_partition_list_t *l;

	if (awaiting_index(f, partition) < 0 || next < 0)
		return; /* one read past already, or no offset in it */
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, f->tcp_name, partition);
	if (!rd_kafka_committed(f->join.rk, l, 5000) && !l->elems[0].err &&
	    l->elems[0].offset < next) {
		f->join.c.marked++;
		l->elems[0].offset = next;
		rd_kafka_error_destroy(
			rd_kafka_seek_partitions(f->join.rk, l, 5000));
	}
	rd_kafka_topic_partition_list_destroy(l);
}

/* The end of <prefix><group>.exchange's partition: every mark is read. */
static void marks_read(struct fleet *f, int32_t partition)
{
	int i = awaiting_index(f, partition);

	if (i >= 0)
		stop_awaiting(f, i);
}

static void mark_timeouts(struct fleet *f, uint64_t now)
{
	int i;

	for (i = f->nawaiting - 1; i >= 0; i--)
		if (now - f->awaiting[i].since_ns >= MARK_WAIT_NS) {
			f->join.c.unmarked++;
			stop_awaiting(f, i);
		}
}

/* An open span back to where it was read, under the key it was read
 * with: its next owner reads it as if for the first time. */
static void hand_over_span(struct span *s, void *ctx)
{
	struct stage *st = ctx;

	produce_span(st, s->partition, s->routed, s->raw, s->raw_len);
	st->c.spans_handed_over++;
	span__free(s);
}

static void hand_over_forward(const void *forward, void *ctx)
{
	const struct forward *fw = forward;

	produce_move(ctx, fw->partition, fw->from, fw->to);
}

static void hand_over_traces(struct stage *st)
{
	st->c.traces_handed_over += traces__take_partitions(
		st->f->traces, is_revoked, hand_over_span, st);
	st->c.forwards_handed_over += forwards__hand_over(
		st->f->forwards, is_revoked, hand_over_forward, st);
}

static void mark_revoked(struct stage *st,
			 const rd_kafka_topic_partition_list_t *parts)
{
	int i, max = -1;

	for (i = 0; i < parts->cnt; i++)
		if (parts->elems[i].partition > max)
			max = parts->elems[i].partition;
	st->nrevoked = max + 1;
	st->revoked =
		xrealloc(st->revoked, (max + 1) * sizeof(*st->revoked) + 1);
	memset(st->revoked, 0, max + 1);
	for (i = 0; i < parts->cnt; i++)
		st->revoked[parts->elems[i].partition] = true;
}

static bool gathers(const struct fleet *f, int32_t partition)
{
	return partition >= 0 && partition < f->span_partitions &&
	       f->gathering[partition];
}

static void set_gathering(struct fleet *f,
			  const rd_kafka_topic_partition_list_t *parts, bool on)
{
	int i;

	for (i = 0; i < parts->cnt; i++)
		if (parts->elems[i].partition < f->span_partitions)
			f->gathering[parts->elems[i].partition] = on;
}

/* Partitions going: what is held for them is sent to them and
 * delivered before the offsets read are committed, so the next owner
 * finds all of it and reads nothing twice. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *member)
{
	struct stage *st = member;
	struct fleet *f = st->f;

	st->c.rebalances++;
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		reader_clock__assigned(st->clock);
		rd_kafka_assign(rk, parts);
		if (st == &f->join)
			await_marks(f, parts);
		else
			set_gathering(f, parts, true);
		return;
	}
	reader_clock__revoked(st->clock);
	mark_revoked(st, parts);
	st->hand_over(st);
	bundles__send(st->bundles);
	st->nrevoked = 0;
	if (st == &f->gather)
		set_gathering(f, parts, false);
	if (rd_kafka_flush(f->producer, HANDOVER_FLUSH_MS))
		fprintf(stderr, "%s: hand-over not delivered in %d s\n", WHO,
			HANDOVER_FLUSH_MS / 1000);
	rd_kafka_commit(rk, NULL, 0);
	rd_kafka_assign(rk, NULL);
}

/* --- stage 1: the ends of each exchange --- */

/* A record is read in place (span.h's one pass) and sent on as it came:
 * nothing is allocated for it here. It goes to where its trace moved,
 * after its own end's join: a server end whose caller came first goes
 * straight to the caller's trace. Returns the record's time (0: none). */
static uint64_t join_tcp(struct fleet *f, const rd_kafka_message_t *m,
			 const struct fleet_where *where)
{
	struct trace_id route;
	struct span_record r;
	struct exchange_end e;
	struct span s;

	if (!f->read(m->payload, m->len, &r, &s, where, f->ctx))
		return 0;
	if (s.has_seq) {
		e = (struct exchange_end){ .key = span__join_key(&s),
					   .trace = s.trace_id,
					   .resp_seq = s.resp_seq,
					   .client = s.client,
					   .partition = m->partition };
		exchanges__add(f->exchanges, &e,
			       reader_clock__now(f->join.clock));
	}
	route = forwards__resolve(f->routes, s.trace_id);
	f->join.c.spans_routed += !trace_id__eq(route, s.trace_id);
	produce_span(&f->join, RD_KAFKA_PARTITION_UA, route, m->payload,
		     m->len);
	return s.end_ns;
}

static bool read_trace(const struct json_value *v, struct trace_id *out)
{
	const char *s = json__str(v);

	return s && span__parse_trace_id(s, strlen(s), out);
}

/* A trace id as kmon-trace writes it: 32 hex digits, no escapes. */
static bool scan_trace(const struct json_scan_value *v, struct trace_id *out)
{
	return v->type == JSON_SCAN_STRING && !v->escaped &&
	       span__parse_trace_id(v->s, v->len, out);
}

static void join_handed_over(struct fleet *f, const rd_kafka_message_t *m)
{
	struct exchange_end e = { .partition = m->partition };
	struct json_error jerr;
	struct json_value *v = json__parse(m->payload, m->len, &jerr);
	const char *kind = json__str(json__get(v, "kind"));
	uint64_t resp_seq;
	int64_t next;

	if (kind && strcmp(kind, "exchange_mark") == 0 &&
	    json__i64(json__get(v, "next"), &next)) {
		take_mark(f, m->partition, next);
	} else if (v && json__u64(json__get(v, "key"), &e.key) &&
		   read_trace(json__get(v, "trace"), &e.trace) &&
		   json__u64(json__get(v, "resp_seq"), &resp_seq) &&
		   json__bool(json__get(v, "client"), &e.client)) {
		e.resp_seq = (uint32_t)resp_seq;
		exchanges__add(f->exchanges, &e,
			       reader_clock__now(f->join.clock));
		f->join.c.taken_over++;
	} else {
		f->join.c.rejected++;
	}
	json__free(v);
}

/* --- stage 2: spans gathered by trace --- */

/* A span kept rather than sent to a partition this member reads: what
 * reading it back would do (gather_span). */
static void keep(struct fleet *f, struct span *s, int32_t partition,
		 struct trace_id to)
{
	s->partition = partition;
	s->routed = s->trace_id = to;
	traces__add(f->traces, s, reader_clock__now(f->gather.clock));
	f->gather.c.spans_kept++;
}

static void send_on(struct span *s, void *ctx)
{
	struct fleet *f = ((void **)ctx)[0];
	const struct trace_id *to = ((void **)ctx)[1];
	char hex[33];
	int32_t p = span_partition(f, *to, hex);

	if (gathers(f, p)) {
		keep(f, s, p, *to);
		return;
	}
	produce_to_span(&f->gather, p, hex, s->raw, s->raw_len);
	f->gather.c.spans_moved++;
	span__free(s);
}

static void gather_move(struct fleet *f, const rd_kafka_message_t *m)
{
	struct forward fw = { .partition = m->partition };
	struct json_scan_value v[2]; /* from, to */
	struct json_error jerr;
	struct trace_id merged;
	void *ctx[2] = { f, &fw.to };

	if (!json_scan(m->payload, m->len, &f->move_keys, v, &jerr) ||
	    !scan_trace(&v[0], &fw.from) || !scan_trace(&v[1], &fw.to)) {
		f->gather.c.rejected++;
		return;
	}
	f->gather.c.moves_in++;
	/* straight to where the caller's trace went from here */
	fw.to = forwards__resolve(f->forwards, fw.to);
	if (trace_id__eq(fw.to, fw.from) ||
	    forwards__add(f->forwards, &fw,
			  reader_clock__now(f->gather.clock))) {
		f->gather.c.moves_repeated++;
		return;
	}
	/* Joined here already (the caller's trace is read here too): its
	 * spans are where they belong, later ones follow the forward. */
	if (traces__take(f->traces, fw.from, &merged, send_on, ctx))
		f->gather.c.traces_moved++;
}

/* A span of a trace that moved goes on unread: where it lands, it is.
 * A span is gathered under the trace it was sent to, its own or one
 * its own moved under (stage 1 or 2 knew the move): every span sent
 * under a trace is with it when the trace moves on, whatever the order
 * the spans and moves came in, and a trace gathered is named by the
 * highest trace it is known to be under. */
static uint64_t gather_span(struct fleet *f, const rd_kafka_message_t *m,
			    const struct fleet_where *where)
{
	struct fleet_counts *c = &f->gather.c;
	int32_t partition = m->partition;
	struct trace_id routed, to;
	char err[256], at[600], hex[33];
	struct span_record r;
	struct json_error jerr;
	struct span s, *kept;

	if (!m->key || !span__parse_trace_id(m->key, m->key_len, &routed)) {
		c->rejected++;
		return 0;
	}
	to = forwards__resolve(f->forwards, routed);
	if (!trace_id__eq(to, routed)) {
		partition = span_partition(f, to, hex);
		if (!gathers(f, partition)) {
			produce_to_span(&f->gather, partition, hex, m->payload,
					m->len);
			c->spans_forwarded++;
			return 0;
		}
		c->spans_kept++; /* read on as if read back */
		routed = to;
	}
	if (span__scan(m->payload, m->len, &r, &jerr) != SPAN_RECORD_TCP) {
		c->rejected++;
		return 0;
	}
	if (!span__check(&r, &s, err, sizeof(err))) {
		fleet_where__format(where, at, sizeof(at));
		fprintf(stderr, "%s: %s: %s\n", WHO, at, err);
		c->rejected++;
		return 0;
	}
	if (traces__has_span(f->traces, s.id)) {
		c->spans_repeated++;
		return 0;
	}
	s.partition = partition;
	s.routed = s.trace_id = routed;
	kept = span__new(&s, &r, m->payload, m->len);
	traces__add(f->traces, kept, reader_clock__now(f->gather.clock));
	return s.end_ns;
}

/* Moves are told from spans by their first bytes, as produce_move
 * writes them: a span is looked at no more than where it goes needs.
 * Returns the time of the record gathered (0: none). */
static uint64_t gather(struct fleet *f, const rd_kafka_message_t *m,
		       const struct fleet_where *where)
{
	if (m->len > sizeof(MOVE_PREFIX) - 1 &&
	    memcmp(m->payload, MOVE_PREFIX, sizeof(MOVE_PREFIX) - 1) == 0) {
		gather_move(f, m);
		return 0;
	}
	return gather_span(f, m, where);
}

/* Each entry of a bundle as the message it stands for. */
static void gather_bundle(struct fleet *f, const rd_kafka_message_t *m,
			  const struct fleet_where *where)
{
	const char *at = m->payload, *end = at + m->len;
	rd_kafka_message_t entry = *m;
	struct bundle_entry e;
	int got;

	f->gather.c.bundles_in++;
	while ((got = bundle__next(&at, end, &e)) > 0) {
		entry.key = (void *)e.key;
		entry.key_len = e.key_len;
		entry.payload = (void *)e.value;
		entry.len = e.len;
		reader_clock__read(f->gather.clock, CLOCK_SPAN, m->partition,
				   gather(f, &entry, where));
	}
	if (got < 0)
		f->gather.c.rejected++;
}

/* --- reading --- */

static void on_message(struct fleet *f, struct stage *st,
		       const rd_kafka_message_t *m)
{
	const char *topic = rd_kafka_topic_name(m->rkt);
	struct fleet_where where = { topic, m->partition, m->offset };

	if (st == &f->gather) {
		if (bundle__is(m->key, m->key_len))
			gather_bundle(f, m, &where);
		else
			reader_clock__read(st->clock, CLOCK_SPAN, m->partition,
					   gather(f, m, &where));
	} else if (strcmp(topic, f->exchange_name) == 0) {
		join_handed_over(f, m);
		reader_clock__read(st->clock, CLOCK_EXCHANGE, m->partition, 0);
	} else {
		reader_clock__read(st->clock, CLOCK_TCP, m->partition,
				   join_tcp(f, m, &where));
	}
}

/* Up to max messages of one stage; returns how many came. */
static int poll_stage(struct fleet *f, struct stage *st, int timeout_ms,
		      int max)
{
	rd_kafka_message_t *m;
	int n = 0;

	while (n < max && (m = rd_kafka_consumer_poll(st->rk, timeout_ms))) {
		timeout_ms = 0;
		if (!m->err) {
			on_message(f, st, m);
			n++;
		} else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			const char *topic = rd_kafka_topic_name(m->rkt);

			reader_clock__at_end(st->clock,
					     reader_clock__topic(st->clock,
								 topic),
					     m->partition);
			if (st == &f->join &&
			    strcmp(topic, f->exchange_name) == 0)
				marks_read(f, m->partition);
		} else if (m->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
			fprintf(stderr, "%s: kafka: %s\n", WHO,
				rd_kafka_message_errstr(m));
		}
		rd_kafka_message_destroy(m);
	}
	/* What was read is done: committed now, so that a rebalance (whose
	 * commit a broker may refuse) finds nothing to read twice. Stage 2
	 * waits for the answer, which says whether it may write; stage 1
	 * need not wait: its next owner starts from its mark (even past a
	 * refused commit), and waiting a round trip each batch held it to
	 * the broker's pace. */
	bundles__send(st->bundles); /* before the offsets' commit */
	if (st == &f->join && n)
		rd_kafka_commit(st->rk, NULL, 1);
	else if (n || st->dirty)
		st->dirty = rd_kafka_commit(st->rk, NULL, 0) ==
			    RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS;
	return n;
}

/* For the caller's thread: what stage 1 counted so far. */
static void show_join_counts(struct fleet *f)
{
	pthread_mutex_lock(&f->shown.lock);
	f->shown.c = f->join.c;
	f->shown.x = *exchanges__counts(f->exchanges);
	pthread_mutex_unlock(&f->shown.lock);
}

/* Stage 1's thread, until fleet__leave: every state of stage 1
 * (exchanges, marks, its consumer and its rebalances) is its own. */
static void *join_loop(void *arg)
{
	struct fleet *f = arg;
	uint64_t now;

	while (!atomic_load(&f->join_stop)) {
		poll_stage(f, &f->join, 100, POLL_BATCH);
		mark_timeouts(f, mono_ns()); /* a mark's wait is the wall's */
		now = reader_clock__tick_consumer(f->join.clock, f->join.rk,
						  false);
		atomic_store(&f->join_behind,
			     reader_clock__behind(f->join.clock));
		exchanges__expire(f->exchanges, now);
		forwards__expire(f->routes, now);
		show_join_counts(f);
	}
	return NULL;
}

int fleet__poll(struct fleet *f, int timeout_ms)
{
	poll_stage(f, &f->gather, timeout_ms, POLL_BATCH);
	rd_kafka_poll(f->producer, 0);
	return 0;
}

uint64_t fleet__clock(struct fleet *f)
{
	return reader_clock__tick_consumer(f->gather.clock, f->gather.rk,
					   atomic_load(&f->join_behind));
}

bool fleet__may_write(const struct fleet *f)
{
	return !f->gather.dirty;
}

void fleet__expire(struct fleet *f, uint64_t now_ns)
{
	forwards__expire(f->forwards, now_ns);
}

/* --- set-up --- */

/* Partitions of each topic (-1: absent), from the cluster's metadata of
 * every topic: asking for one by name would have the broker create it. */
static int partitions_of(rd_kafka_t *rk, const char *const *names, int *out,
			 int n)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_resp_err_t err;
	int i, j;

	err = rd_kafka_metadata(rk, 1, NULL, &md, 10000);
	if (err) {
		fprintf(stderr, "%s: kafka metadata: %s\n", WHO,
			rd_kafka_err2str(err));
		return -1;
	}
	for (j = 0; j < n; j++) {
		out[j] = -1;
		for (i = 0; i < md->topic_cnt; i++)
			if (strcmp(md->topics[i].topic, names[j]) == 0)
				out[j] = md->topics[i].partition_cnt;
	}
	rd_kafka_metadata_destroy(md);
	return 0;
}

static rd_kafka_t *new_producer(const struct source_opts *o)
{
	const char *defaults[][2] = {
		{ "bootstrap.servers", o->brokers },
		{ "linger.ms", "5" },
		{ "queue.buffering.max.messages", "1000000" },
		{ "log.connection.close", "false" },
	};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;
	size_t i;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (rd_kafka_conf_set(conf, defaults[i][0], defaults[i][1],
				      errstr, sizeof(errstr)))
			goto fail;
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (rk)
		return rk;
fail:
	rd_kafka_conf_destroy(conf);
	fprintf(stderr, "%s: %s\n", WHO, errstr);
	return NULL;
}

/* The stages' topics must be there: <prefix><group>.exchange with as many
 * partitions as <prefix>tcp, so that the range assignor gives partition
 * p of both to one member. */
static int check_topics(struct fleet *f)
{
	const char *names[] = { f->tcp_name, f->exchange_name, f->span_name };
	int parts[3], i;

	if (partitions_of(f->producer, names, parts, 3))
		return -1;
	f->span_partitions = parts[2];
	f->gathering = xcalloc(parts[2] > 0 ? parts[2] : 1, sizeof(bool));
	for (i = 0; i < 3; i++)
		if (parts[i] < 0) {
			fprintf(stderr,
				"%s: no topic %s: create %s, %s and %s "
				"first (the last two with as many partitions "
				"as the first; docs/consumers.md)\n",
				WHO, names[i], names[0], names[1], names[2]);
			return -1;
		}
	if (parts[0] != parts[1]) {
		fprintf(stderr,
			"%s: %s has %d partitions, %s %d: they must be "
			"equal\n",
			WHO, names[0], parts[0], names[1], parts[1]);
		return -1;
	}
	return 0;
}

static int open_stage(struct fleet *f, struct stage *st,
		      const struct source_opts *o, const char *group,
		      const char *const *topics, int ntopics)
{
	st->member.who = WHO;
	st->f = f;
	st->rk = kafka_group__new(
		&(struct kafka_group_opts){ .who = WHO,
					    .member = &st->member,
					    .rebalance = on_rebalance,
					    .brokers = o->brokers,
					    .group = group,
					    .props = o->props,
					    .nprops = o->nprops });
	if (!st->rk)
		return -1;
	return kafka_group__subscribe_all(st->rk, WHO, topics, ntopics);
}

struct fleet *fleet__open(const struct fleet_opts *o, struct traces *traces,
			  fleet_read_fn read, void *ctx)
{
	static const char *const move_names[] = { "from", "to" };
	const struct source_opts *src = o->src;
	struct fleet *f = xcalloc(1, sizeof(*f));
	const char *join_topics[2], *gather_topic;
	char group2[512];

	f->traces = traces;
	f->read = read;
	f->ctx = ctx;
	json_scan__keys(&f->move_keys, move_names, 2);
	snprintf(f->tcp_name, sizeof(f->tcp_name), "%stcp", src->prefix);
	snprintf(f->span_name, sizeof(f->span_name), "%s%s.span", src->prefix,
		 src->group);
	snprintf(f->exchange_name, sizeof(f->exchange_name), "%s%s.exchange",
		 src->prefix, src->group);
	snprintf(group2, sizeof(group2), "%s.traces", src->group);
	f->exchanges = exchanges__new(o->max_pending, o->late_ns, on_move, f);
	traces__remember_written(traces, o->max_pending);
	f->forwards = forwards__new(FORWARDS_MAX, o->late_ns);
	f->routes = forwards__new(FORWARDS_MAX, o->late_ns);
	pthread_mutex_init(&f->shown.lock, NULL);
	f->join.hand_over = hand_over_ends;
	f->gather.hand_over = hand_over_traces;
	f->producer = new_producer(src);
	if (!f->producer || check_topics(f))
		goto fail;
	f->span_topic = rd_kafka_topic_new(f->producer, f->span_name, NULL);
	f->join.bundles =
		bundles__new(f->span_partitions, send_bundle, &f->join);
	f->gather.bundles =
		bundles__new(f->span_partitions, send_bundle, &f->gather);
	f->exchange_topic =
		rd_kafka_topic_new(f->producer, f->exchange_name, NULL);
	join_topics[CLOCK_TCP] = f->tcp_name;
	join_topics[CLOCK_EXCHANGE] = f->exchange_name;
	gather_topic = f->span_name;
	/* the records' times: kmond's tcp records, as they are in span */
	f->join.clock =
		reader_clock__new(join_topics, (bool[]){ true, false }, 2);
	f->gather.clock = reader_clock__new(&gather_topic, (bool[]){ true }, 1);
	if (open_stage(f, &f->join, src, src->group, join_topics, 2) ||
	    open_stage(f, &f->gather, src, group2, &gather_topic, 1))
		goto fail;
	snprintf(f->name, sizeof(f->name),
		 "%s from %s as group %s, then %s as group %s", f->tcp_name,
		 src->brokers, src->group, f->span_name, group2);
	if (pthread_create(&f->join_thread, NULL, join_loop, f)) {
		fprintf(stderr, "%s: cannot start stage 1's thread\n", WHO);
		goto fail;
	}
	pthread_setname_np(f->join_thread, "kmon-stage1");
	f->join_running = true;
	return f;
fail:
	fleet__close(f);
	return NULL;
}

static void close_stage(struct stage *st)
{
	if (!st->rk)
		return;
	rd_kafka_consumer_close(st->rk); /* revokes: hands over */
	rd_kafka_destroy(st->rk);
	st->rk = NULL;
}

void fleet__leave(struct fleet *f)
{
	if (f->join_running) {
		atomic_store(&f->join_stop, true);
		pthread_join(f->join_thread, NULL);
		f->join_running = false;
	}
	/* stage 1 first: its last moves reach stage 2's next owner */
	close_stage(&f->join);
	show_join_counts(f);
	close_stage(&f->gather);
	if (f->producer)
		rd_kafka_flush(f->producer, HANDOVER_FLUSH_MS);
}

void fleet__close(struct fleet *f)
{
	if (!f)
		return;
	fleet__leave(f);
	if (f->producer) {
		if (f->span_topic)
			rd_kafka_topic_destroy(f->span_topic);
		if (f->exchange_topic)
			rd_kafka_topic_destroy(f->exchange_topic);
		rd_kafka_destroy(f->producer);
	}
	bundles__free(f->join.bundles);
	bundles__free(f->gather.bundles);
	exchanges__free(f->exchanges);
	forwards__free(f->forwards);
	forwards__free(f->routes);
	strbuf__free(&f->join.buf);
	strbuf__free(&f->gather.buf);
	free(f->join.revoked);
	free(f->gather.revoked);
	reader_clock__free(f->join.clock);
	reader_clock__free(f->gather.clock);
	free(f->gathering);
	pthread_mutex_destroy(&f->shown.lock);
	free(f);
}

void fleet_where__format(const struct fleet_where *w, char *buf, size_t size)
{
	snprintf(buf, size, "%s [%d] offset %lld", w->topic, (int)w->partition,
		 (long long)w->offset);
}

const char *fleet__name(const struct fleet *f)
{
	return f->name;
}

/* struct fleet_counts is made of uint64_t only. */
static void add_counts(struct fleet_counts *sum, const struct fleet_counts *c)
{
	uint64_t *s = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)c;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		s[i] += v[i];
}

void fleet__counts(struct fleet *f, struct strbuf *sb)
{
	struct exchange_counts xs;
	struct fleet_counts cs = f->gather.c;
	const struct exchange_counts *x = &xs;
	const struct fleet_counts *c = &cs;

	pthread_mutex_lock(&f->shown.lock);
	add_counts(&cs, &f->shown.c);
	xs = f->shown.x;
	pthread_mutex_unlock(&f->shown.lock);

	strbuf__addf(
		sb,
		",\"fleet\":{\"ends\":%llu,\"ends_joined\":%llu,"
		"\"moves\":%llu,\"ends_ambiguous\":%llu,"
		"\"ends_mismatched\":%llu,\"ends_expired\":%llu,"
		"\"ends_evicted\":%llu,\"ends_handed_over\":%llu,"
		"\"ends_taken_over\":%llu,\"ends_pending\":%llu,"
		"\"spans_routed\":%llu,"
		"\"moves_in\":%llu,\"moves_repeated\":%llu,"
		"\"traces_moved\":%llu,\"spans_moved\":%llu,"
		"\"spans_forwarded\":%llu,\"spans_kept\":%llu,"
		"\"traces_handed_over\":%llu,"
		"\"spans_handed_over\":%llu,\"forwards_handed_over\":%llu,"
		"\"forwards\":%zu,\"rebalances\":%llu,"
		"\"produce_failed\":%llu,\"rejected\":%llu,"
		"\"ends_repeated\":%llu,\"spans_repeated\":%llu,"
		"\"partitions_marked\":%llu,\"partitions_unmarked\":%llu,"
		"\"bundles_in\":%llu}",
		(unsigned long long)x->ends, (unsigned long long)x->joined,
		(unsigned long long)x->moves, (unsigned long long)x->ambiguous,
		(unsigned long long)x->mismatched,
		(unsigned long long)x->expired, (unsigned long long)x->evicted,
		(unsigned long long)x->handed_over,
		(unsigned long long)c->taken_over,
		(unsigned long long)x->pending,
		(unsigned long long)c->spans_routed,
		(unsigned long long)c->moves_in,
		(unsigned long long)c->moves_repeated,
		(unsigned long long)c->traces_moved,
		(unsigned long long)c->spans_moved,
		(unsigned long long)c->spans_forwarded,
		(unsigned long long)c->spans_kept,
		(unsigned long long)c->traces_handed_over,
		(unsigned long long)c->spans_handed_over,
		(unsigned long long)c->forwards_handed_over,
		forwards__count(f->forwards), (unsigned long long)c->rebalances,
		(unsigned long long)c->produce_failed,
		(unsigned long long)c->rejected,
		(unsigned long long)x->repeated,
		(unsigned long long)c->spans_repeated,
		(unsigned long long)c->marked, (unsigned long long)c->unmarked,
		(unsigned long long)c->bundles_in);
}
