// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* reader_clock.h. Per topic, per partition: the newest record time read
 * there and whether the partition is at its end. */
#include <stdlib.h>
#include <string.h>

#include "reader_clock.h"
#include "lib/clock.h"
#include "lib/xalloc.h"

#define MAX_TOPICS 4
/* A consumer's clock is ticked at most this often: asking librdkafka for
 * the assignment waits on its main thread. */
#define TICK_NS 10000000ULL

struct partition_state {
	uint64_t newest; /* unix ns; 0: no record with a time yet */
	bool at_end;
};

struct topic_state {
	const char *name;
	bool stamped;
	struct partition_state *p;
	int32_t cap;
};

struct reader_clock {
	struct topic_state t[MAX_TOPICS];
	int ntopics;
	uint64_t now; /* the clock */
	uint64_t mono; /* the monotonic clock at the last tick */
	/* The stream's time the clock has reached: the highest watermark
	 * seen, moved on with the wall clock while the reader is not
	 * behind. 0: none yet. */
	uint64_t stream;
	bool behind;
	bool rebalancing; /* between a revocation and the next assignment */
};

struct reader_clock *reader_clock__new(const char *const *topics,
				       const bool *stamped, int ntopics)
{
	struct reader_clock *c = xcalloc(1, sizeof(*c));
	int i;

	if (ntopics > MAX_TOPICS)
		ntopics = MAX_TOPICS;
	for (i = 0; i < ntopics; i++)
		c->t[i] = (struct topic_state){ .name = topics[i],
						.stamped = stamped[i] };
	c->ntopics = ntopics;
	return c;
}

void reader_clock__free(struct reader_clock *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->ntopics; i++)
		free(c->t[i].p);
	free(c);
}

int reader_clock__topic(const struct reader_clock *c, const char *topic)
{
	int i;

	for (i = 0; i < c->ntopics; i++)
		if (c->t[i].name == topic || strcmp(c->t[i].name, topic) == 0)
			return i;
	return -1;
}

/* topic's state of partition, made on first use; NULL for a topic or
 * partition out of range */
static struct partition_state *slot(struct reader_clock *c, int topic,
				    int32_t partition)
{
	struct topic_state *t;
	int32_t cap;

	if (topic < 0 || topic >= c->ntopics || partition < 0 ||
	    partition >= (1 << 20))
		return NULL;
	t = &c->t[topic];
	if (partition >= t->cap) {
		cap = t->cap ? t->cap : 16;
		while (cap <= partition)
			cap *= 2;
		t->p = xrealloc(t->p, cap * sizeof(*t->p));
		memset(t->p + t->cap, 0, (cap - t->cap) * sizeof(*t->p));
		t->cap = cap;
	}
	return &t->p[partition];
}

void reader_clock__read(struct reader_clock *c, int topic, int32_t partition,
			uint64_t ts_ns)
{
	struct partition_state *p = slot(c, topic, partition);

	if (!p)
		return;
	p->at_end = false;
	if (ts_ns > p->newest)
		p->newest = ts_ns;
}

void reader_clock__at_end(struct reader_clock *c, int topic, int32_t partition)
{
	struct partition_state *p = slot(c, topic, partition);

	if (p)
		p->at_end = true;
}

/* Every partition behind, none read yet. */
static void forget(struct reader_clock *c)
{
	int i;

	for (i = 0; i < c->ntopics; i++)
		if (c->t[i].p)
			memset(c->t[i].p, 0, c->t[i].cap * sizeof(*c->t[i].p));
}

void reader_clock__revoked(struct reader_clock *c)
{
	forget(c);
	c->rebalancing = true;
}

void reader_clock__assigned(struct reader_clock *c)
{
	forget(c);
	c->rebalancing = false;
}

/* How far every assigned partition not at its end has been read, by
 * its records' times (with waits, those at their end too: what the
 * reader waits on sends them more): UINT64_MAX where none has a time to
 * give (all at their end, or only unstamped topics behind), 0 where one
 * has given none yet. *behind: some assigned partition is not at its
 * end, or a rebalance is under way. */
static uint64_t watermark(struct reader_clock *c,
			  const rd_kafka_topic_partition_list_t *assigned,
			  bool waits, bool *behind)
{
	uint64_t w = UINT64_MAX;
	struct partition_state *p;
	int i, topic;

	*behind = c->rebalancing;
	for (i = 0; assigned && i < assigned->cnt; i++) {
		topic = reader_clock__topic(c, assigned->elems[i].topic);
		p = slot(c, topic, assigned->elems[i].partition);
		if (!p)
			continue;
		if (!p->at_end)
			*behind = true;
		else if (!waits)
			continue;
		if (c->t[topic].stamped && p->newest < w)
			w = p->newest;
	}
	return w;
}

uint64_t reader_clock__tick(struct reader_clock *c,
			    const rd_kafka_topic_partition_list_t *assigned,
			    uint64_t mono, uint64_t real, bool waits)
{
	uint64_t w = watermark(c, assigned, waits, &c->behind), step;

	if (!c->mono)
		c->now = c->mono = mono;
	step = mono - c->mono;
	c->mono = mono;
	c->behind |= waits;
	if (!c->behind) {
		c->now += step;
		if (c->stream)
			c->stream += step; /* the stream's time goes on too */
		return c->now;
	}
	if (w == UINT64_MAX || !w)
		return c->now; /* nothing read tells how far the stream is */
	if (w > real)
		w = real; /* a node whose clock runs ahead */
	if (!c->stream) {
		c->stream = w; /* the first time read: where the stream is */
		return c->now;
	}
	/* as far as the stream went, and no faster than the wall clock: a
	 * partition read ahead of another makes the watermark leap when
	 * the slower one catches up (or ends), and the spans of a trace
	 * read from both must not be set further apart than the wall
	 * clock would; the rest of a leap is made up at the wall clock's
	 * pace, so that a reader that never reaches the end of its
	 * partitions while it keeps up does not fall behind the stream */
	if (w > c->stream) {
		step = w - c->stream < step ? w - c->stream : step;
		c->now += step;
		c->stream += step;
	}
	return c->now;
}

uint64_t reader_clock__tick_consumer(struct reader_clock *c, rd_kafka_t *rk,
				     bool waits)
{
	rd_kafka_topic_partition_list_t *assigned = NULL;
	uint64_t mono = mono_ns(), now;

	if (c->mono && mono - c->mono < TICK_NS)
		return c->now;
	if (rd_kafka_assignment(rk, &assigned))
		assigned = NULL;
	now = reader_clock__tick(c, assigned, mono, clock_ns(CLOCK_REALTIME),
				 waits);
	if (assigned)
		rd_kafka_topic_partition_list_destroy(assigned);
	return now;
}

uint64_t reader_clock__now(const struct reader_clock *c)
{
	return c->now;
}

bool reader_clock__behind(const struct reader_clock *c)
{
	return c->behind;
}
