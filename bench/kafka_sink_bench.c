// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kafka sink throughput: builds N tcp-like records (JSON encoding
 * included, exactly as collectors do) and hands them to kmond's Kafka
 * sink, as fast as the sink takes them, until every one is delivered to
 * the broker at BROKERS. Prints records/s (wall) and CPU per record (user
 * + system of the whole process: kmond's thread and librdkafka's).
 *
 *   kafka_sink_bench BROKERS [N]     (KAFKA_TCP_KEY=service: the
 *                                     tcp_key option, default exchange)
 *
 * Built and run by bench/kafka-sink.sh against build/tests/kafka_broker. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "config/config.h"
#include "lib/record.h"
#include "exporters/sink.h"

/* Like kmond's interval loop: serve callbacks every so many records, and
 * when librdkafka's queue is this deep let it drain a little (a daemon
 * producing faster than the broker takes would hit the queue bound). */
#define POLL_EVERY 1000
#define HIGH_WATER 200000

static double now_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* A request record as the tcp collector writes it. */
static void build(struct record *r, uint64_t i)
{
	static const char *const services[] = { "frontend", "cart",
						"checkout", "catalog",
						"payments", "users",
						"search",   "ads" };
	const char *svc = services[i % 8];

	record__begin(r, "tcp", 1795335771653050451ULL + i * 1000,
		      "bench-node");
	record__process(r, 1000 + i % 64, "nginx: worker", svc);
	record__str(r, "laddr", "10.1.2.3");
	record__u64(r, "lport", 8080);
	record__str(r, "raddr", "10.1.7.42");
	record__u64(r, "rport", 30000 + i % 30000);
	record__u64(r, "latency_ns", 150000 + (i * 7919) % 5000000);
	record__u64(r, "req_bytes", 300 + i % 700);
	record__u64(r, "resp_bytes", 2000 + (i * 31) % 60000);
	/* where kmond writes them: the key (docs/kafka.md) is found there */
	record__str(r, "side", "server");
	record__u64(r, "req_seq", (uint32_t)(i * 2654435761u));
	record__u64(r, "resp_seq", (uint32_t)(i * 40503u));
	record__end(r);
}

/* JSON encoding alone, for the breakdown. */
static double encode_only(uint64_t n)
{
	struct record r;
	double t0 = cpu_s();
	size_t bytes = 0;

	record__init(&r);
	for (uint64_t i = 0; i < n; i++) {
		build(&r, i);
		bytes += r.json.len;
	}
	record__free(&r);
	printf("record size: %.0f bytes of JSON\n", (double)bytes / n);
	return (cpu_s() - t0) / n;
}

int main(int argc, char **argv)
{
	struct exporter_cfg cfg = {
		.type = EXPORTER_KAFKA,
		.topic_prefix = "bench.",
		.queue_messages = 1000000,
		.queue_bytes = 1ULL << 30,
		.drop = DROP_NEWEST,
		.flush_timeout_ns = 120ULL * 1000000000ULL,
	};
	struct sink_stats st;
	struct sink *s = NULL;
	struct record r;
	double w0, c0, wall, cpu, enc, enqueued;
	uint64_t n, i, waits = 0;
	char err[256];

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s BROKERS [N]\n", argv[0]);
		return 2;
	}
	cfg.brokers = argv[1];
	if (getenv("KAFKA_TCP_KEY") &&
	    strcmp(getenv("KAFKA_TCP_KEY"), "service") == 0)
		cfg.tcp_key = KAFKA_TCP_KEY_SERVICE;
	n = argc == 3 ? strtoull(argv[2], NULL, 10) : 1000000;
	enc = encode_only(n / 4 ?: 1);

	if (kafka_sink_ops.open(&s, &cfg, err, sizeof(err))) {
		fprintf(stderr, "open: %s\n", err);
		return 1;
	}
	/* Connected (metadata for the topic) before the clock starts. */
	record__init(&r);
	build(&r, 0);
	kafka_sink_ops.send(s, &r);
	kafka_sink_ops.flush(s, 10000);

	w0 = now_s(CLOCK_MONOTONIC);
	c0 = cpu_s();
	for (i = 1; i <= n; i++) {
		build(&r, i);
		if (kafka_sink_ops.send(s, &r))
			break;
		if (i % POLL_EVERY)
			continue;
		kafka_sink_ops.flush(s, 0);
		kafka_sink_ops.stats(s, &st);
		while (st.queued > HIGH_WATER) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
			kafka_sink_ops.stats(s, &st);
			waits++;
		}
	}
	enqueued = now_s(CLOCK_MONOTONIC) - w0;
	kafka_sink_ops.flush(s, 120000);
	wall = now_s(CLOCK_MONOTONIC) - w0;
	cpu = cpu_s() - c0;
	kafka_sink_ops.stats(s, &st);
	kafka_sink_ops.close(s);
	record__free(&r);

	printf("records: %llu sent, %llu delivered, %llu failed "
	       "(%llu dropped)\n",
	       (unsigned long long)st.sent - 1,
	       (unsigned long long)st.delivered - 1,
	       (unsigned long long)st.failed, (unsigned long long)st.dropped);
	printf("wall: %.2f s -> %.0f records/s delivered (all handed to the "
	       "sink after %.2f s: %.0f records/s)\n",
	       wall, n / wall, enqueued, n / enqueued);
	printf("cpu: %.2f s (%.0f%% of one core) -> %.2f us per record, "
	       "%.0f records per CPU-second\n",
	       cpu, 100 * cpu / wall, 1e6 * cpu / n, n / cpu);
	printf("  of which JSON encoding: %.3f us per record\n", 1e6 * enc);
	printf("producer waited for the queue %llu times\n",
	       (unsigned long long)waits);
	return st.delivered == n + 1 && !st.failed ? 0 : 1;
}
