/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The clock a Kafka reader's windows run on (kmon-trace's --quiet and
 * --late): the stream's own time while the reader is behind it, the
 * wall clock once it has read all there is.
 *
 * On the wall clock alone a window splits what it waits for whenever the
 * reader falls behind the stream (a member with less CPU than the stream
 * needs, a restart after an outage, a backlog): the spans of one trace,
 * a second apart in the stream, are read a minute apart. So while any
 * partition it reads is not at its end, the clock moves as far as every
 * such partition has been read, by the records' own times (the oldest
 * of their newest times: a stream processor's watermark), no faster
 * than the wall clock, and not at all while one of them has given
 * nothing yet or a rebalance is under
 * way. While what the reader waits on (the stage before it) is behind,
 * the partitions at their end count too: more is coming. Once every
 * partition is at its end and nothing waited on is behind, it moves
 * with the wall clock. It never goes back, and never past the
 * local clock by a record from a node whose clock runs ahead. */
#ifndef KMON_READER_CLOCK_H
#define KMON_READER_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

struct reader_clock;

/* A clock for a consumer of topics[0 .. ntopics-1]; stamped[i]: topic i's
 * records carry their times (reader_clock__read's ts_ns), else only
 * where its partitions end counts. */
struct reader_clock *reader_clock__new(const char *const *topics,
				       const bool *stamped, int ntopics);
void reader_clock__free(struct reader_clock *c);
/* The index of topic (a name) in the clock's topics, or -1. */
int reader_clock__topic(const struct reader_clock *c, const char *topic);
/* A message of topic index topic read from partition; ts_ns its record's
 * own time (unix epoch), 0 for none. */
void reader_clock__read(struct reader_clock *c, int topic, int32_t partition,
			uint64_t ts_ns);
/* partition of topic index topic read to its end (PARTITION_EOF). */
void reader_clock__at_end(struct reader_clock *c, int topic, int32_t partition);
/* A rebalance (a consumer's rebalance callback): partitions revoked,
 * the clock held until the next assignment; partitions assigned (none,
 * maybe: more members than partitions), each behind until read. A
 * consumer that does not tell (librdkafka's own rebalancing) runs on the
 * wall clock while nothing is assigned. */
void reader_clock__revoked(struct reader_clock *c);
void reader_clock__assigned(struct reader_clock *c);
/* The clock now (nanoseconds), given the partitions assigned (NULL:
 * none), the monotonic and the real clocks, and whether what this
 * reader waits on (another stage) is behind. */
uint64_t reader_clock__tick(struct reader_clock *c,
			    const rd_kafka_topic_partition_list_t *assigned,
			    uint64_t mono, uint64_t real, bool waits);
/* reader_clock__tick for consumer rk now (its assignment, the clocks),
 * at most every 10 ms: reader_clock__now in between. */
uint64_t reader_clock__tick_consumer(struct reader_clock *c, rd_kafka_t *rk,
				     bool waits);
/* As of the last tick. */
uint64_t reader_clock__now(const struct reader_clock *c);
bool reader_clock__behind(const struct reader_clock *c);

#endif
