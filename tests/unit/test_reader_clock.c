// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The clock of a Kafka reader's windows (consumers/common/reader_clock.h):
 * the stream's time while behind, by the partition read least far; the
 * wall clock at the end of every partition; never backwards, never past
 * the local clock. */
#include "consumers/common/reader_clock.h"
#include "unit.h"

#define S 1000000000ULL
#define T0 (1795000000ULL * S) /* the records' time */
#define REAL (T0 + 3600 * S) /* the local clock, an hour later: a backlog */

static const char *topics[] = { "kmon.tcp", "kmon.g.exchange" };
static const bool stamped[] = { true, false };

static rd_kafka_topic_partition_list_t *assign(int n)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new(n + 1);
	int i;

	for (i = 0; i < n; i++)
		rd_kafka_topic_partition_list_add(l, "kmon.tcp", i);
	rd_kafka_topic_partition_list_add(l, "kmon.g.exchange", 0);
	return l;
}

/* Reading a backlog: the clock moves as far as the slower partition has
 * been read, however long the reading takes on the wall clock. */
static void test_backlog(void)
{
	struct reader_clock *c = reader_clock__new(topics, stamped, 2);
	rd_kafka_topic_partition_list_t *l = assign(2);
	uint64_t mono = 100 * S, start;

	start = reader_clock__tick(c, l, mono, REAL, false);
	CHECK(reader_clock__behind(c));
	/* one partition gave records, the other nothing yet: no time */
	reader_clock__read(c, 0, 0, T0 + 5 * S);
	mono += 60 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start);
	/* both gave: the first time read sets where the stream is */
	reader_clock__read(c, 0, 1, T0 + 1 * S);
	mono += 60 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start);
	/* the slower one moves 2 s on, the faster 10 s: 2 s */
	reader_clock__read(c, 0, 1, T0 + 3 * S);
	reader_clock__read(c, 0, 0, T0 + 15 * S);
	mono += 60 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 2 * S);
	/* an older record (another node's lag) moves nothing back */
	reader_clock__read(c, 0, 1, T0 + 2 * S);
	mono += S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 2 * S);
	/* the slower one at its end: the other alone says how far, 12 s
	 * on; the clock moves no faster than the wall's 1 s, and makes
	 * up the rest of such a leap at the wall clock's pace */
	reader_clock__at_end(c, 0, 1);
	mono += S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 3 * S);
	mono += 4 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 7 * S);
	mono += 20 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 14 * S);
	/* a reader that never reaches its partitions' end while the
	 * stream goes by in leaps keeps up with it */
	for (int i = 1; i <= 100; i++) {
		if (i % 10 == 0)
			reader_clock__read(c, 0, 0, T0 + (15 + i / 10) * S);
		mono += S / 10;
		reader_clock__tick(c, l, mono, REAL, false);
	}
	/* 10 s of the stream in 10 s: within one leap (1 s) of it */
	CHECK(reader_clock__now(c) >= start + 23 * S);
	CHECK(reader_clock__now(c) <= start + 24 * S);
	CHECK(reader_clock__behind(c));
	rd_kafka_topic_partition_list_destroy(l);
	reader_clock__free(c);
}

/* At the end of everything: the wall clock; a stage waited on that is
 * behind holds it. */
static void test_caught_up(void)
{
	struct reader_clock *c = reader_clock__new(topics, stamped, 2);
	rd_kafka_topic_partition_list_t *l = assign(1);
	uint64_t mono = 100 * S, start, now;

	reader_clock__read(c, 0, 0, T0);
	start = reader_clock__tick(c, l, mono, REAL, false);
	reader_clock__at_end(c, 0, 0);
	mono += S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start);
	reader_clock__at_end(c, 1, 0); /* the exchange topic too */
	mono += 3 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 3 * S);
	CHECK(!reader_clock__behind(c));
	/* waiting on a stage behind: the partitions at their end count
	 * (more is coming), by what they gave */
	mono += 5 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, true) == start + 3 * S);
	CHECK(reader_clock__behind(c));
	/* a new record from a stream that went on meanwhile: the stream's
	 * time went on with the wall clock, so no jump */
	reader_clock__read(c, 0, 0, T0 + 4 * S);
	mono += S;
	now = reader_clock__tick(c, l, mono, REAL, false);
	CHECK(now == start + 4 * S);
	reader_clock__at_end(c, 0, 0);
	reader_clock__read(c, 0, 0, T0 + 6 * S);
	reader_clock__at_end(c, 0, 0);
	mono += 2 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, true) == now + 2 * S);
	now += 2 * S;
	/* a rebalance: held from the revocation to the assignment */
	reader_clock__revoked(c);
	mono += 2 * S;
	CHECK(reader_clock__tick(c, NULL, mono, REAL, false) == now);
	CHECK(reader_clock__behind(c));
	/* nothing assigned after it (more members than partitions): the
	 * wall clock */
	reader_clock__assigned(c);
	mono += 2 * S;
	CHECK(reader_clock__tick(c, NULL, mono, REAL, false) == now + 2 * S);
	CHECK(!reader_clock__behind(c));
	rd_kafka_topic_partition_list_destroy(l);
	reader_clock__free(c);
}

/* A record stamped after the local clock (a node's clock ahead) moves
 * the clock to the local clock at most; a new assignment starts over:
 * its partitions behind, none read. */
static void test_ahead_and_forget(void)
{
	struct reader_clock *c = reader_clock__new(topics, stamped, 2);
	rd_kafka_topic_partition_list_t *l = assign(1);
	uint64_t mono = 100 * S, start;

	reader_clock__read(c, 0, 0, REAL - 10 * S);
	start = reader_clock__tick(c, l, mono, REAL, false);
	reader_clock__read(c, 0, 0, REAL + 3600 * S);
	mono += 20 * S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 10 * S);
	reader_clock__revoked(c);
	reader_clock__assigned(c);
	reader_clock__at_end(c, 1, 0);
	mono += S;
	CHECK(reader_clock__tick(c, l, mono, REAL, false) == start + 10 * S);
	CHECK(reader_clock__behind(c));
	CHECK(reader_clock__topic(c, "kmon.g.exchange") == 1);
	CHECK(reader_clock__topic(c, "other") == -1);
	rd_kafka_topic_partition_list_destroy(l);
	reader_clock__free(c);
}

int main(void)
{
	test_backlog();
	test_caught_up();
	test_ahead_and_forget();
	return unit_done("reader_clock");
}
