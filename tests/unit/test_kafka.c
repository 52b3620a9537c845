// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Kafka sink against librdkafka's in-process mock cluster: records
 * arrive byte-exact with their keys and headers, an outage loses nothing,
 * the queue bound drops by policy, a dead broker is logged, and property
 * checks follow librdkafka. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "config/config.h"
#include "config/kafka_property.h"
#include "lib/record.h"
#include "exporters/sink.h"
#include "unit.h"

#define NODE "node-\"1\"" /* needs escaping in JSON */
#define MAX_MSGS 256

struct msg {
	char *key, *value, *kind, *node;
	size_t vlen;
};

struct consumed {
	struct msg m[MAX_MSGS];
	int n;
};

static rd_kafka_t *mock_rk;
static rd_kafka_mock_cluster_t *mc;
static const char *bootstraps;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int mock_start(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];

	rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
	mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!mock_rk)
		return -1;
	mc = rd_kafka_mock_cluster_new(mock_rk, 1);
	if (!mc)
		return -1;
	bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
	return 0;
}

static void mock_stop(void)
{
	if (mc)
		rd_kafka_mock_cluster_destroy(mc);
	if (mock_rk)
		rd_kafka_destroy(mock_rk);
}

static void cfg_init(struct exporter_cfg *cfg, const char *prefix)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->type = EXPORTER_KAFKA;
	cfg->brokers = (char *)bootstraps;
	cfg->topic_prefix = (char *)prefix;
	cfg->queue_messages = 10000;
	cfg->queue_bytes = 16 << 20;
	cfg->drop = DROP_NEWEST;
	cfg->flush_timeout_ns = 15000000000ULL;
}

static struct sink *open_sink(const struct exporter_cfg *cfg)
{
	struct sink *s = NULL;
	char err[256] = "";

	if (kafka_sink_ops.open(&s, cfg, err, sizeof(err)))
		fprintf(stderr, "open: %s\n", err);
	return s;
}

/* Record i: kind tcp, key "svc<i % 3>" or a pid, a distinct body. */
static void build_record(struct record *r, const char *kind, int i)
{
	char comm[16];

	snprintf(comm, sizeof(comm), "comm%d", i);
	record__begin(r, kind, 1700000000000000000ULL + i, NODE);
	if (i % 4 == 3) {
		record__process(r, 1000 + i, comm, NULL);
	} else {
		char svc[16];

		snprintf(svc, sizeof(svc), "svc%d", i % 3);
		record__process(r, 1000 + i, comm, svc);
	}
	record__u64(r, "seq", i);
	record__str(r, "text", "tab\there \"quoted\" \xff");
	record__end(r);
}

static int send_range(struct sink *s, const char *kind, int from, int to)
{
	struct record r;
	int i, fails = 0;

	record__init(&r);
	for (i = from; i < to; i++) {
		build_record(&r, kind, i);
		if (kafka_sink_ops.send(s, &r))
			fails++;
	}
	record__free(&r);
	return fails;
}

static char *dupn(const void *p, size_t len)
{
	char *s = malloc(len + 1);

	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static char *header(rd_kafka_message_t *m, const char *name)
{
	rd_kafka_headers_t *hdrs;
	const void *val;
	size_t len;

	if (rd_kafka_message_headers(m, &hdrs) ||
	    rd_kafka_header_get_last(hdrs, name, &val, &len))
		return NULL;
	return dupn(val, len);
}

/* Assigns every partition of topic from the beginning. */
static int assign_all(rd_kafka_t *rk, const char *topic)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_partition_list_t *parts;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	int i, n = -1;

	if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == 0 &&
	    md->topic_cnt == 1 && !md->topics[0].err) {
		n = md->topics[0].partition_cnt;
		parts = rd_kafka_topic_partition_list_new(n);
		for (i = 0; i < n; i++)
			rd_kafka_topic_partition_list_add(parts, topic, i)
				->offset = RD_KAFKA_OFFSET_BEGINNING;
		rd_kafka_assign(rk, parts);
		rd_kafka_topic_partition_list_destroy(parts);
	}
	if (md)
		rd_kafka_metadata_destroy(md);
	rd_kafka_topic_destroy(rkt);
	return n;
}

/* Reads topic to its end (every partition at EOF). */
static void consume(const char *topic, struct consumed *c)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;
	int parts, eofs = 0, polls = 0;

	memset(c, 0, sizeof(*c));
	rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr,
			  sizeof(errstr));
	rd_kafka_conf_set(conf, "group.id", "test_kafka", errstr,
			  sizeof(errstr));
	rd_kafka_conf_set(conf, "enable.partition.eof", "true", errstr,
			  sizeof(errstr));
	rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr,
			  sizeof(errstr));
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
	if (!rk)
		return;
	parts = assign_all(rk, topic);
	while (parts > 0 && eofs < parts && polls++ < 100) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);

		if (!m)
			continue;
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			eofs++;
		} else if (!m->err && c->n < MAX_MSGS) {
			struct msg *x = &c->m[c->n++];

			x->key = m->key ? dupn(m->key, m->key_len) : NULL;
			x->value = dupn(m->payload, m->len);
			x->vlen = m->len;
			x->kind = header(m, "kind");
			x->node = header(m, "node");
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
}

static void consumed_free(struct consumed *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->m[i].key);
		free(c->m[i].value);
		free(c->m[i].kind);
		free(c->m[i].node);
	}
}

/* The seq field of a consumed record, or -1. */
static int seq_of(const struct msg *m)
{
	const char *p = strstr(m->value, "\"seq\":");

	return p ? atoi(p + 6) : -1;
}

static void check_stats(struct sink *s, uint64_t sent, uint64_t delivered,
			uint64_t failed, uint64_t queued)
{
	struct sink_stats st;

	kafka_sink_ops.stats(s, &st);
	CHECK(st.sent == sent);
	CHECK(st.delivered == delivered);
	CHECK(st.failed == failed);
	CHECK(st.queued == queued);
	if (st.sent != sent || st.delivered != delivered ||
	    st.failed != failed || st.queued != queued)
		fprintf(stderr,
			"  stats: sent %llu delivered %llu failed %llu "
			"queued %llu\n",
			(unsigned long long)st.sent,
			(unsigned long long)st.delivered,
			(unsigned long long)st.failed,
			(unsigned long long)st.queued);
}

/* Every record arrives on <prefix><kind>, byte-exact, keyed, with its
 * kind and node headers; topics need not exist beforehand. */
static void test_delivery(void)
{
	const int n = 60;
	struct exporter_cfg cfg;
	struct consumed c;
	struct record r;
	struct sink *s;
	int i, seen[60] = { 0 };

	cfg_init(&cfg, "kmon.");
	s = open_sink(&cfg);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(send_range(s, "tcp", 0, n) == 0);
	/* A node that needs no unescaping, and a record without a key. */
	record__init(&r);
	record__begin(&r, "stats", 1, "plain");
	record__u64(&r, "events", 7);
	record__end(&r);
	CHECK(kafka_sink_ops.send(s, &r) == 0);
	kafka_sink_ops.flush(s, 10000);
	check_stats(s, n + 1, n + 1, 0, 0);
	kafka_sink_ops.close(s);

	consume("kmon.tcp", &c);
	CHECK(c.n == n);
	for (i = 0; i < c.n; i++) {
		int seq = seq_of(&c.m[i]);

		CHECK(seq >= 0 && seq < n);
		if (seq < 0 || seq >= n)
			continue;
		seen[seq]++;
		build_record(&r, "tcp", seq);
		CHECK(c.m[i].vlen == r.json.len &&
		      memcmp(c.m[i].value, r.json.buf, r.json.len) == 0);
		CHECK_STR(c.m[i].key, r.key);
		CHECK_STR(c.m[i].kind, "tcp");
		CHECK_STR(c.m[i].node, NODE);
	}
	for (i = 0; i < n; i++)
		CHECK(seen[i] == 1);
	record__free(&r);
	consumed_free(&c);

	consume("kmon.stats", &c);
	CHECK(c.n == 1);
	if (c.n == 1) {
		CHECK(c.m[0].key == NULL);
		CHECK_STR(c.m[0].value, "{\"kind\":\"stats\",\"ts\":1,"
					"\"node\":\"plain\",\"events\":7}");
		CHECK_STR(c.m[0].kind, "stats");
		CHECK_STR(c.m[0].node, "plain");
	}
	consumed_free(&c);
}

/* A broker outage of a few seconds: records wait and all arrive. */
static void test_outage(void)
{
	const int n = 40;
	struct exporter_cfg cfg;
	struct consumed c;
	struct sink *s;
	struct sink_stats st;
	struct timespec t0, t1;
	int i;

	cfg_init(&cfg, "outage.");
	s = open_sink(&cfg);
	CHECK(s != NULL);
	if (!s)
		return;
	/* Connected and delivering first, then the broker goes away. */
	CHECK(send_range(s, "tcp", 0, n / 2) == 0);
	kafka_sink_ops.flush(s, 0);
	for (i = 0; i < 50; i++) {
		kafka_sink_ops.stats(s, &st);
		if (st.delivered == (uint64_t)n / 2)
			break;
		sleep_ms(100);
	}
	rd_kafka_mock_broker_set_down(mc, 1);
	CHECK(send_range(s, "tcp", n / 2, n) == 0);
	for (i = 0; i < 30; i++) {
		kafka_sink_ops.flush(s, 0); /* the interval flush */
		sleep_ms(100);
	}
	check_stats(s, n, n / 2, 0, n / 2);
	rd_kafka_mock_broker_set_up(mc, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kafka_sink_ops.flush(s, 15000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  outage: delivered %d records %.2f s after the broker "
	       "came back\n",
	       n / 2,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	check_stats(s, n, n, 0, 0);
	kafka_sink_ops.close(s);

	consume("outage.tcp", &c);
	CHECK(c.n == n);
	consumed_free(&c);
}

/* Broker down from the start, 30 records, room for 16: which survive
 * depends on the policy. Returns the survivors' seq bitmap. */
static unsigned long long bounded_run(enum drop_policy drop, const char *prefix,
				      int *send_fails)
{
	struct exporter_cfg cfg;
	struct consumed c;
	struct sink_stats st;
	struct sink *s;
	unsigned long long seen = 0;
	char topic[64];
	int i;

	cfg_init(&cfg, prefix);
	cfg.queue_messages = 16;
	cfg.drop = drop;
	rd_kafka_mock_broker_set_down(mc, 1);
	s = open_sink(&cfg);
	CHECK(s != NULL);
	if (!s) {
		rd_kafka_mock_broker_set_up(mc, 1);
		return 0;
	}
	*send_fails = send_range(s, "tcp", 0, 30);
	kafka_sink_ops.flush(s, 0);
	check_stats(s, 30, 0, 14, 16);
	rd_kafka_mock_broker_set_up(mc, 1);
	kafka_sink_ops.flush(s, 15000);
	check_stats(s, 30, 16, 14, 0);
	/* Every failure here is the policy's, none the final flush's. */
	kafka_sink_ops.stats(s, &st);
	CHECK(st.dropped == 14);
	kafka_sink_ops.close(s);

	snprintf(topic, sizeof(topic), "%stcp", prefix);
	consume(topic, &c);
	CHECK(c.n == 16);
	for (i = 0; i < c.n; i++)
		seen |= 1ULL << seq_of(&c.m[i]);
	consumed_free(&c);
	return seen;
}

static void test_bound(void)
{
	unsigned long long seen;
	int fails;

	/* The first 16 are kept, the 14 newest refused by send(). */
	seen = bounded_run(DROP_NEWEST, "newest.", &fails);
	CHECK(seen == 0xffffULL);
	CHECK(fails == 14);

	/* librdkafka holds 16/8 = 2 (already handed over, kept); the FIFO
	 * holds 14 and keeps the newest: 0, 1 and 16..29 survive. send()
	 * itself never fails: each drop is an older record. */
	seen = bounded_run(DROP_OLDEST, "oldest.", &fails);
	CHECK(seen == (0x3ULL | (((1ULL << 14) - 1) << 16)));
	CHECK(fails == 0);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* Nothing listens on port 1: a clear line in the log, the record is
 * counted failed at the final flush, and nothing blocks. */
static void test_unreachable(void)
{
	struct exporter_cfg cfg;
	char path[] = "/tmp/test_kafka.XXXXXX", log[4096] = "";
	struct timespec t0, t1;
	double waited = -1;
	uint64_t dropped = 1;
	struct sink_stats st;
	int fd, saved, i;
	struct sink *s;
	FILE *f;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);

	cfg_init(&cfg, "dead.");
	cfg.brokers = "127.0.0.1:1";
	cfg.flush_timeout_ns = 300000000ULL; /* caps the 10 s below */
	s = open_sink(&cfg);
	if (s) {
		send_range(s, "tcp", 0, 3);
		for (i = 0; i < 15; i++) {
			kafka_sink_ops.flush(s, 0);
			sleep_ms(100);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		kafka_sink_ops.flush(s, 10000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (t1.tv_sec - t0.tv_sec) +
			 (t1.tv_nsec - t0.tv_nsec) / 1e9;
		check_stats(s, 3, 0, 3, 0);
		kafka_sink_ops.stats(s, &st);
		dropped = st.dropped;
		kafka_sink_ops.close(s);
	}

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	log[fread(log, 1, sizeof(log) - 1, f)] = '\0';
	fclose(f);
	unlink(path);
	CHECK(s != NULL);
	CHECK(waited >= 0.25 && waited < 1.5);
	CHECK(dropped == 0); /* given up at exit, not dropped by the bound */
	CHECK(strstr(log, "kmond: kafka: 127.0.0.1:1: ") != NULL);
	CHECK(strstr(log, "Connection refused") != NULL);
	CHECK(strstr(log, "kmond: kafka: 127.0.0.1:1: 3 records not "
			  "delivered") != NULL);
	/* Rate-limited: one line per error, not one per reconnect. */
	CHECK(count(log, "Connection refused") == 1);
}

static void test_check_property(void)
{
	char err[256];

	err[0] = '\0';
	CHECK(kafka__check_property("no.such.property", "1", err,
				    sizeof(err)) == -1);
	CHECK(strstr(err, "no.such.property") != NULL);
	err[0] = '\0';
	CHECK(kafka__check_property("linger.ms", "soon", err, sizeof(err)) ==
	      -1);
	CHECK(err[0] != '\0');
	CHECK(kafka__check_property("acks", "7000", err, sizeof(err)) == -1);
	CHECK(kafka__check_property("linger.ms", "5", err, sizeof(err)) == 0);
	CHECK(kafka__check_property("compression.type", "lz4", err,
				    sizeof(err)) == 0);
}

/* Bad properties fail open() with "kafka: ..." in err. */
static void test_open_errors(void)
{
	struct kafka_property prop = { "no.such.property", "1" };
	struct exporter_cfg cfg;
	struct sink *s = (struct sink *)1;
	char err[256] = "";

	cfg_init(&cfg, "x.");
	cfg.props = &prop;
	cfg.nprops = 1;
	CHECK(kafka_sink_ops.open(&s, &cfg, err, sizeof(err)) < 0);
	CHECK(s == NULL);
	CHECK(strncmp(err, "kafka: ", 7) == 0);

	cfg_init(&cfg, "x.");
	cfg.brokers = NULL;
	err[0] = '\0';
	CHECK(kafka_sink_ops.open(&s, &cfg, err, sizeof(err)) < 0);
	CHECK(strncmp(err, "kafka: ", 7) == 0);
	kafka_sink_ops.close(NULL);
}

int main(void)
{
	if (mock_start()) {
		fprintf(stderr, "cannot start the mock cluster\n");
		return 1;
	}
	test_check_property();
	test_open_errors();
	test_delivery();
	test_outage();
	test_bound();
	test_unreachable();
	mock_stop();
	return unit_done("kafka");
}
