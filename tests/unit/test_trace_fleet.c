// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmon-trace --fleet's state: stage 1's ends of exchanges (a join moves
 * the server's trace under its caller's; an end read twice is not a
 * second end; ambiguity, late ends and the bound; hand-over by
 * partition), stage 2's forwards and where a chain of them ends,
 * traces taken out of traces.h, and the stages' bundles (what they hold
 * read back in order, sent when full, bytes cut short refused). */
#include <stdlib.h>
#include <string.h>

#include "consumers/kmon-trace/bundle.h"
#include "consumers/kmon-trace/exchanges.h"
#include "consumers/kmon-trace/forwards.h"
#include "consumers/kmon-trace/traces.h"
#include "unit.h"

#define SEC 1000000000ULL

struct moves {
	struct trace_id from[8], to[8];
	int n;
};

static void on_move(struct trace_id from, struct trace_id to, void *ctx)
{
	struct moves *m = ctx;

	m->from[m->n] = from;
	m->to[m->n++] = to;
}

static struct exchange_end end(uint64_t key, bool client, uint64_t trace,
			       uint32_t resp_seq, int32_t partition)
{
	return (struct exchange_end){ .key = key,
				      .client = client,
				      .trace = { 0, trace },
				      .resp_seq = resp_seq,
				      .partition = partition };
}

static bool odd(int32_t partition, void *ctx)
{
	(void)ctx;
	return partition % 2;
}

static void count_end(const void *e, void *ctx)
{
	(void)e;
	(*(int *)ctx)++;
}

static void test_exchanges(void)
{
	struct moves m = { 0 };
	struct exchanges *x = exchanges__new(4, 10 * SEC, on_move, &m);
	struct exchange_end c = end(0x1234, true, 0xa, 7, 0);
	struct exchange_end s = end(0x1234, false, 0xb, 7, 0);
	const struct exchange_counts *n = exchanges__counts(x);
	int handed = 0;

	/* a client, read twice (a rebalance), then its server: one move */
	exchanges__add(x, &c, 1 * SEC);
	exchanges__add(x, &c, 1 * SEC);
	CHECK(n->repeated == 1 && n->ambiguous == 0 && n->pending == 1);
	exchanges__add(x, &s, 2 * SEC);
	CHECK(m.n == 1 && m.from[0].lo == 0xb && m.to[0].lo == 0xa);
	CHECK(n->joined == 1 && n->moves == 1 && n->pending == 0);

	/* the same trace at both ends (one host): joined, no move */
	exchanges__add(x,
		       &(struct exchange_end){
			       .key = 5, .client = true, .trace = { 0, 0xa } },
		       2 * SEC);
	exchanges__add(x,
		       &(struct exchange_end){ .key = 5, .trace = { 0, 0xa } },
		       2 * SEC);
	CHECK(n->joined == 2 && m.n == 1);

	/* two servers under one key, different traces: neither is joined */
	exchanges__add(x, &(struct exchange_end){ .key = 6, .trace = { 0, 1 } },
		       3 * SEC);
	exchanges__add(x, &(struct exchange_end){ .key = 6, .trace = { 0, 2 } },
		       3 * SEC);
	CHECK(n->ambiguous == 2 && n->pending == 0);

	/* resp_seq differs: no join */
	exchanges__add(x,
		       &(struct exchange_end){
			       .key = 8, .client = true, .resp_seq = 1 },
		       3 * SEC);
	exchanges__add(x, &(struct exchange_end){ .key = 8, .resp_seq = 2 },
		       3 * SEC);
	CHECK(n->mismatched == 1 && m.n == 1);

	/* waiting ends of odd partitions go to their next owner */
	exchanges__add(x, &(struct exchange_end){ .key = 9, .partition = 3 },
		       4 * SEC);
	CHECK(exchanges__hand_over(x, odd, count_end, &handed) == 1);
	CHECK(handed == 1 && n->handed_over == 1);
	/* the one of partition 0 (key 8) waits until late_ns */
	CHECK(n->pending == 1);
	exchanges__expire(x, 13 * SEC);
	CHECK(n->expired == 1 && n->pending == 0);

	/* past max_pending (4), the oldest goes */
	for (uint64_t k = 100; k < 105; k++)
		exchanges__add(x, &(struct exchange_end){ .key = k }, 20 * SEC);
	CHECK(n->evicted == 1 && n->pending == 4);
	exchanges__free(x);
}

static void count_fw(const void *fw, void *ctx)
{
	(void)fw;
	(*(int *)ctx)++;
}

static void test_forwards(void)
{
	struct forwards *f = forwards__new(2, 10 * SEC);
	struct forward a = { .from = { 0, 1 }, .to = { 0, 2 }, .partition = 1 };
	struct forward b = { .from = { 0, 3 }, .to = { 0, 4 }, .partition = 2 };
	int handed = 0;

	CHECK(!forwards__add(f, &a, 1 * SEC));
	CHECK(forwards__add(f, &a, 1 * SEC)); /* a repeated move */
	CHECK(forwards__find(f, a.from)->to.lo == 2);
	CHECK(!forwards__find(f, a.to));
	CHECK(!forwards__add(f, &b, 2 * SEC));
	CHECK(forwards__hand_over(f, odd, count_fw, &handed) == 1 &&
	      handed == 1);
	CHECK(!forwards__find(f, a.from) && forwards__find(f, b.from));
	forwards__expire(f, 12 * SEC);
	CHECK(!forwards__find(f, b.from) && forwards__count(f) == 0);
	forwards__free(f);
}

/* A chain of moves resolves to its end; a cycle, which only records
 * that contradict each other make, ends after FORWARDS_HOPS. */
static void test_resolve(void)
{
	struct forwards *f = forwards__new(8, 10 * SEC);
	struct forward ab = { .from = { 0, 1 }, .to = { 0, 2 } };
	struct forward bc = { .from = { 0, 2 }, .to = { 0, 3 } };
	struct forward ca = { .from = { 0, 3 }, .to = { 0, 1 } };

	CHECK(forwards__resolve(f, ab.from).lo == 1); /* stays */
	forwards__add(f, &ab, 1 * SEC);
	forwards__add(f, &bc, 1 * SEC);
	CHECK(forwards__resolve(f, ab.from).lo == 3);
	CHECK(forwards__resolve(f, bc.from).lo == 3);
	CHECK(forwards__resolve(f, bc.to).lo == 3);
	forwards__add(f, &ca, 1 * SEC);
	/* 1 -> 2 -> 3 -> 1 ...: FORWARDS_HOPS steps from 1 */
	CHECK(forwards__resolve(f, ab.from).lo == 1 + FORWARDS_HOPS % 3);
	forwards__free(f);
}

static void no_write(const struct trace_view *t, void *ctx)
{
	(void)t;
	(*(int *)ctx)++;
}

static void take_span(struct span *s, void *ctx)
{
	(*(int *)ctx)++;
	span__free(s);
}

static struct span *mk_span(uint64_t id, uint64_t trace, int32_t partition)
{
	struct span *s = calloc(1, sizeof(*s));

	s->id = id;
	s->trace_id = (struct trace_id){ 0, trace };
	s->partition = partition;
	return s;
}

static void test_take(void)
{
	int written = 0, taken = 0;
	struct traces *t = traces__new(100, 100, 0, no_write, &written);
	struct trace_id merged;

	traces__add(t, mk_span(1, 0xa, 0), 1);
	traces__add(t, mk_span(2, 0xa, 0), 1);
	traces__add(t, mk_span(3, 0xb, 1), 1);
	CHECK(traces__has_span(t, 2) && !traces__has_span(t, 9));
	CHECK(traces__take(t, (struct trace_id){ 0, 0xa }, &merged, take_span,
			   &taken));
	CHECK(taken == 2 && !traces__has_span(t, 2));
	CHECK(!traces__take(t, (struct trace_id){ 0, 0xa }, &merged, take_span,
			    &taken));
	CHECK(traces__take_partitions(t, odd, take_span, &taken) == 1);
	CHECK(taken == 3 && traces__counts(t)->open_spans == 0);
	traces__flush(t);
	CHECK(written == 0);
	traces__free(t);

	/* a span read again after its trace was written: still known */
	t = traces__new(100, 100, 0, no_write, &written);
	traces__remember_written(t, 2);
	traces__add(t, mk_span(1, 0xa, 0), 1);
	traces__add(t, mk_span(2, 0xb, 0), 1);
	traces__add(t, mk_span(3, 0xc, 0), 1);
	traces__flush(t);
	CHECK(written == 3);
	CHECK(!traces__has_span(t, 1)); /* the oldest of 3, past max 2 */
	CHECK(traces__has_span(t, 2) && traces__has_span(t, 3));
	traces__free(t);
}

struct sent {
	char value[4][BUNDLE_BYTES + 64];
	size_t len[4];
	int32_t partition[4];
	int n;
};

static void keep_sent(int32_t partition, const char *value, size_t len,
		      void *ctx)
{
	struct sent *s = ctx;

	if (s->n < 4 && len <= sizeof(s->value[0])) {
		memcpy(s->value[s->n], value, len);
		s->len[s->n] = len;
		s->partition[s->n++] = partition;
	}
}

/* Entries of sent bundle i: their keys' first letters and values'
 * lengths, joined; -1 when it is cut short. */
static int read_back(const struct sent *s, int i, char *keys, size_t *lens)
{
	const char *at = s->value[i], *end = at + s->len[i];
	struct bundle_entry e;
	int got, n = 0;

	while ((got = bundle__next(&at, end, &e)) > 0) {
		keys[n] = e.key_len ? e.key[0] : '-';
		lens[n++] = e.len;
	}
	keys[n] = '\0';
	return got < 0 ? -1 : n;
}

static void test_bundles(void)
{
	static struct sent s;
	static char big[BUNDLE_BYTES / 2];
	struct bundles *b = bundles__new(3, keep_sent, &s);
	char keys[8];
	size_t lens[8];

	CHECK(bundle__is(BUNDLE_KEY, strlen(BUNDLE_KEY)));
	CHECK(!bundle__is("0123456789abcdef0123456789abcdef", 32));
	CHECK(!bundles__add(b, 3, "a", 1, "x", 1)); /* no such partition */
	CHECK(bundles__add(b, 1, "a", 1, "{}", 2));
	CHECK(bundles__add(b, 2, "b", 1, "{\"k\":1}", 7));
	CHECK(bundles__add(b, 1, "c", 1, "", 0));
	bundles__send(b);
	CHECK(s.n == 2 && s.partition[0] == 1 && s.partition[1] == 2);
	CHECK(read_back(&s, 0, keys, lens) == 2);
	CHECK_STR(keys, "ac");
	CHECK(lens[0] == 2 && lens[1] == 0);
	CHECK(read_back(&s, 1, keys, lens) == 1 && lens[0] == 7);
	bundles__send(b); /* nothing held: nothing sent */
	CHECK(s.n == 2);

	/* the third entry would pass BUNDLE_BYTES: the two before go */
	memset(big, 'x', sizeof(big));
	s.n = 0;
	CHECK(bundles__add(b, 0, "d", 1, big, sizeof(big)));
	CHECK(bundles__add(b, 0, "e", 1, big, 32));
	CHECK(s.n == 0);
	CHECK(bundles__add(b, 0, "f", 1, big, sizeof(big)));
	CHECK(s.n == 1 && read_back(&s, 0, keys, lens) == 2);
	CHECK_STR(keys, "de");
	bundles__send(b);
	CHECK(s.n == 2 && read_back(&s, 1, keys, lens) == 1);
	CHECK_STR(keys, "f");

	/* cut short: in the head, in the key, in the value */
	s.len[1] = 3;
	CHECK(read_back(&s, 1, keys, lens) == -1);
	s.len[1] = 6;
	CHECK(read_back(&s, 1, keys, lens) == -1);
	s.len[1] = 5 + 1 + sizeof(big) - 1;
	CHECK(read_back(&s, 1, keys, lens) == -1);
	bundles__free(b);
}

int main(void)
{
	test_exchanges();
	test_forwards();
	test_resolve();
	test_take();
	test_bundles();
	return unit_done("trace_fleet");
}
