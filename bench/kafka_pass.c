// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Kafka floor of kmon-trace --fleet's stage 1: one member of a group
 * that reads N records of TOPIC and produces each, unread, to TOPIC.pass
 * under its own key, as stage 1 sends every record on; nothing parsed,
 * nothing kept. Prints records/s from the first record to the last
 * delivered, and the CPU a record costs (user + system of the process:
 * this thread's and librdkafka's), apart for this thread.
 *
 *   kafka_pass BROKERS TOPIC N       (bench/fleet.sh) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "consumers/common/kafka_group.h"

static double now_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static rd_kafka_t *producer(const char *brokers)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[512];
	rd_kafka_t *rk;

	/* kmon-trace --fleet's producer settings (fleet.c) */
	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "linger.ms", "5", err, sizeof(err)) ||
	    rd_kafka_conf_set(conf, "queue.buffering.max.messages", "1000000",
			      err, sizeof(err))) {
		fprintf(stderr, "kafka_pass: %s\n", err);
		exit(1);
	}
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "kafka_pass: %s\n", err);
		exit(1);
	}
	return rk;
}

int main(int argc, char **argv)
{
	double t0 = 0, c0 = 0, m0 = 0, t1, c1, m1;
	rd_kafka_t *in, *out;
	rd_kafka_topic_t *to;
	rd_kafka_message_t *m;
	char group[64], topic[256];
	long n, got = 0;

	if (argc != 4 || (n = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: kafka_pass BROKERS TOPIC N\n");
		return 2;
	}
	snprintf(group, sizeof(group), "pass-%ld", (long)time(NULL));
	in = kafka_group__new(&(struct kafka_group_opts){
		.who = "kafka_pass", .brokers = argv[1], .group = group });
	out = producer(argv[1]);
	snprintf(topic, sizeof(topic), "%s.pass", argv[2]);
	to = rd_kafka_topic_new(out, topic, NULL);
	if (!in || kafka_group__subscribe(in, "kafka_pass", argv[2]))
		return 1;
	while (got < n) {
		m = rd_kafka_consumer_poll(in, 1000);
		if (!m)
			continue;
		if (!m->err) {
			if (!got++) {
				t0 = now_s(CLOCK_MONOTONIC);
				c0 = cpu_s(RUSAGE_SELF);
				m0 = cpu_s(RUSAGE_THREAD);
			}
			while (rd_kafka_produce(to, RD_KAFKA_PARTITION_UA,
						RD_KAFKA_MSG_F_COPY, m->payload,
						m->len, m->key, m->key_len,
						NULL) == -1)
				rd_kafka_poll(out, 10); /* queue full */
			rd_kafka_poll(out, 0);
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_flush(out, 60000);
	t1 = now_s(CLOCK_MONOTONIC);
	c1 = cpu_s(RUSAGE_SELF);
	m1 = cpu_s(RUSAGE_THREAD);
	printf("%ld records passed on in %.2f s: %.0f records/s, %.2f us CPU "
	       "a record (%.2f us this thread, the rest librdkafka's)\n",
	       got, t1 - t0, got / (t1 - t0), (c1 - c0) / got * 1e6,
	       (m1 - m0) / got * 1e6);
	rd_kafka_topic_destroy(to);
	rd_kafka_consumer_close(in);
	rd_kafka_destroy(in);
	rd_kafka_destroy(out);
	return 0;
}
