// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Kafka sink: one idempotent librdkafka producer per configured
 * exporter. Topic per record kind (<topic_prefix><kind>), value = the
 * record's JSON, headers "kind", "node" and "service" (the record's own
 * key: its service, or its pid). The message key is that key too, but
 * for tcp records, keyed by their exchange (exchange_key below) unless
 * the config asks for the service.
 *
 * Everything here runs on the exporter's thread: send() and flush() call
 * rd_kafka_poll(rk, 0), which is where librdkafka runs our delivery-report
 * and error callbacks, so the counters need no locking and nothing waits
 * on the network.
 *
 * While brokers are unreachable records wait in librdkafka's queue
 * (message.timeout.ms = 0: a record never expires while it waits, so an
 * outage loses nothing as long as the queue can hold it). The queue is
 * bounded by cfg->queue_messages / cfg->queue_bytes; past the bound:
 *  - DROP_NEWEST: the new record is refused and counted failed.
 *  - DROP_OLDEST: a record librdkafka has accepted cannot be taken back,
 *    so librdkafka gets 1/8 of the bound and an own FIFO in front of it
 *    the other 7/8. Records refused with QUEUE_FULL wait in the FIFO;
 *    when it is full its oldest record is dropped and counted failed.
 *    Once the FIFO holds anything, new records queue behind it so one
 *    key's records stay in order. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "config/config.h"
#include "exporters/sink.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/log.h"

/* librdkafka's own defaults, used when the config leaves a bound at 0. */
#define KAFKA_DEFAULT_QUEUE_MESSAGES 100000ULL
#define KAFKA_DEFAULT_QUEUE_BYTES (1024ULL * 1024 * 1024)
/* DROP_OLDEST: librdkafka holds 1/KAFKA_OLDEST_SHARE of the bound. */
#define KAFKA_OLDEST_SHARE 8
/* Record kinds are a fixed set in the code (tcp, drop, bio, ...). */
#define KAFKA_MAX_TOPICS 32
/* One line per error code per interval, however often it happens. */
#define KAFKA_LOG_INTERVAL_NS (10ULL * 1000000000ULL)
#define KAFKA_LOG_SLOTS 16
#define KAFKA_NODE_MAX 256
/* Final flush: the wait between two checks of the FIFO. */
#define KAFKA_FLUSH_STEP_MS 50
/* After a purge, the bounded wait for its delivery reports. */
#define KAFKA_PURGE_WAIT_MS 1000

struct kafka_topic {
	char kind[RECORD_KIND_MAX];
	rd_kafka_topic_t *rkt;
};

/* A record librdkafka refused with QUEUE_FULL (DROP_OLDEST only). */
struct backlog_entry {
	struct backlog_entry *next;
	int topic; /* index into sink->topics */
	size_t klen, vlen, nlen, slen;
	char data[]; /* key, value, node, service */
};

/* What one message carries besides its topic. */
struct kafka_msg {
	const char *key, *val, *node, *service;
	size_t klen, vlen, nlen, slen;
};

struct ratelimit {
	int code;
	uint64_t last_ns;
};

struct sink {
	rd_kafka_t *rk;
	char *brokers;
	char *prefix;
	enum drop_policy drop;
	enum kafka_tcp_key tcp_key;
	uint64_t flush_timeout_ms; /* caps the final flush */
	char hostname[KAFKA_NODE_MAX];

	struct kafka_topic topics[KAFKA_MAX_TOPICS];
	int ntopics;

	struct backlog_entry *head, *tail;
	uint64_t backlog_msgs, backlog_bytes;
	uint64_t backlog_max_msgs, backlog_max_bytes;

	uint64_t sent, delivered, failed, dropped;
	struct ratelimit limits[KAFKA_LOG_SLOTS];
};

/* True when a message about code may be logged now. */
static bool kafka__may_log(struct sink *s, int code)
{
	uint64_t now = mono_ns();
	struct ratelimit *slot = NULL;
	int i;

	for (i = 0; i < KAFKA_LOG_SLOTS; i++) {
		struct ratelimit *l = &s->limits[i];

		if (l->last_ns && l->code == code) {
			slot = l;
			break;
		}
		if (!slot || l->last_ns < slot->last_ns)
			slot = l; /* free or least recently used */
	}
	if (slot->last_ns && slot->code == code &&
	    now - slot->last_ns < KAFKA_LOG_INTERVAL_NS)
		return false;
	slot->code = code;
	slot->last_ns = now;
	return true;
}

static void kafka__dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m,
			 void *opaque)
{
	struct sink *s = opaque;

	(void)rk;
	if (!m->err) {
		s->delivered++;
		return;
	}
	s->failed++;
	/* A purge is the final flush giving up; it reports its own total. */
	if (m->err != RD_KAFKA_RESP_ERR__PURGE_QUEUE &&
	    m->err != RD_KAFKA_RESP_ERR__PURGE_INFLIGHT &&
	    kafka__may_log(s, m->err))
		log_info("kafka: %s: delivery failed: %s", s->brokers,
			 rd_kafka_err2str(m->err));
}

static void kafka__error_cb(rd_kafka_t *rk, int err, const char *reason,
			    void *opaque)
{
	struct sink *s = opaque;
	char fatal[512];

	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		/* The idempotent producer cannot go on (e.g. a sequence gap);
		 * every further record fails and is counted. */
		rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
		log_info("kafka: %s: fatal: %s", s->brokers, fatal);
		return;
	}
	if (kafka__may_log(s, err))
		log_info("kafka: %s: %s", s->brokers, reason);
}

/* librdkafka's log lines come from its own threads. Connection failures
 * ("FAIL") repeat at every reconnect and error_cb already reports them,
 * rate-limited; anything else at warning level or worse is worth a line. */
static void kafka__log_cb(const rd_kafka_t *rk, int level, const char *fac,
			  const char *buf)
{
	(void)rk;
	if (level > LOG_WARNING || strcmp(fac, "FAIL") == 0)
		return;
	log_info("kafka: %s: %s", fac, buf);
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *val,
		    char *err, size_t errlen)
{
	char errstr[512];

	if (rd_kafka_conf_set(conf, key, val, errstr, sizeof(errstr)) ==
	    RD_KAFKA_CONF_OK)
		return 0;
	snprintf(err, errlen, "kafka: %s: %s", key, errstr);
	return -EINVAL;
}

static int conf_set_u64(rd_kafka_conf_t *conf, const char *key, uint64_t v,
			char *err, size_t errlen)
{
	char val[32];

	if (v > INT_MAX)
		v = INT_MAX;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return conf_set(conf, key, val, err, errlen);
}

/* Splits the bound between librdkafka and the DROP_OLDEST FIFO. */
static int kafka__set_bounds(struct sink *s, rd_kafka_conf_t *conf,
			     const struct exporter_cfg *cfg, char *err,
			     size_t errlen)
{
	uint64_t msgs = cfg->queue_messages ?: KAFKA_DEFAULT_QUEUE_MESSAGES;
	uint64_t bytes = cfg->queue_bytes ?: KAFKA_DEFAULT_QUEUE_BYTES;
	uint64_t lib_msgs = msgs, lib_bytes = bytes;
	int ret;

	if (s->drop == DROP_OLDEST) {
		lib_msgs = msgs / KAFKA_OLDEST_SHARE ?: 1;
		lib_bytes = bytes / KAFKA_OLDEST_SHARE ?: 1;
		s->backlog_max_msgs = msgs > lib_msgs ? msgs - lib_msgs : 1;
		s->backlog_max_bytes = bytes > lib_bytes ? bytes - lib_bytes :
							   1;
	}
	ret = conf_set_u64(conf, "queue.buffering.max.messages", lib_msgs, err,
			   errlen);
	if (ret)
		return ret;
	return conf_set_u64(conf, "queue.buffering.max.kbytes",
			    (lib_bytes + 1023) / 1024, err, errlen);
}

static int kafka__configure(struct sink *s, rd_kafka_conf_t *conf,
			    const struct exporter_cfg *cfg, char *err,
			    size_t errlen)
{
	/* message.timeout.ms 0: a record waits for as long as the outage
	 * lasts; the queue bound, not a clock, decides what is dropped.
	 * reconnect.backoff.max.ms: come back within 2 s of the broker,
	 * so a long outage does not leave a full queue waiting 10 s more.
	 * log.connection.close: idle disconnects are not news. */
	static const char *const defaults[][2] = {
		{ "enable.idempotence", "true" },
		{ "acks", "all" },
		{ "message.timeout.ms", "0" },
		{ "reconnect.backoff.max.ms", "2000" },
		{ "log.connection.close", "false" },
	};
	size_t i;
	int ret;

	ret = conf_set(conf, "bootstrap.servers", cfg->brokers, err, errlen);
	for (i = 0; !ret && i < ARRAY_SIZE(defaults); i++)
		ret = conf_set(conf, defaults[i][0], defaults[i][1], err,
			       errlen);
	if (!ret)
		ret = kafka__set_bounds(s, conf, cfg, err, errlen);
	/* The user's properties come last so they can override any of it. */
	for (i = 0; !ret && i < (size_t)cfg->nprops; i++)
		ret = conf_set(conf, cfg->props[i].key, cfg->props[i].value,
			       err, errlen);
	if (ret)
		return ret;
	rd_kafka_conf_set_opaque(conf, s);
	rd_kafka_conf_set_dr_msg_cb(conf, kafka__dr_cb);
	rd_kafka_conf_set_error_cb(conf, kafka__error_cb);
	rd_kafka_conf_set_log_cb(conf, kafka__log_cb);
	return 0;
}

static int kafka__open(struct sink **out, const struct exporter_cfg *cfg,
		       char *err, size_t errlen)
{
	rd_kafka_conf_t *conf = NULL;
	char errstr[512];
	struct sink *s;
	int ret;

	*out = NULL;
	if (!cfg->brokers || !*cfg->brokers) {
		snprintf(err, errlen, "kafka: no brokers configured");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "kafka: out of memory");
		return -ENOMEM;
	}
	s->drop = cfg->drop;
	s->tcp_key = cfg->tcp_key;
	s->flush_timeout_ms = cfg->flush_timeout_ns / 1000000ULL;
	s->brokers = strdup(cfg->brokers);
	s->prefix = strdup(cfg->topic_prefix ? cfg->topic_prefix : "");
	if (!s->brokers || !s->prefix) {
		snprintf(err, errlen, "kafka: out of memory");
		ret = -ENOMEM;
		goto cleanup;
	}
	/* Only for records built without a node (see record_node). */
	if (gethostname(s->hostname, sizeof(s->hostname) - 1))
		snprintf(s->hostname, sizeof(s->hostname), "unknown");

	conf = rd_kafka_conf_new();
	ret = kafka__configure(s, conf, cfg, err, errlen);
	if (ret)
		goto cleanup;
	s->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!s->rk) {
		snprintf(err, errlen, "kafka: %s", errstr);
		ret = -EINVAL;
		goto cleanup;
	}
	conf = NULL; /* now owned by s->rk */
	*out = s;
	return 0;
cleanup:
	if (conf)
		rd_kafka_conf_destroy(conf);
	free(s->brokers);
	free(s->prefix);
	free(s);
	return ret;
}

/* The topic handle for a kind, created on first use. Returns its index
 * or -1. */
static int kafka__topic(struct sink *s, const char *kind)
{
	char name[512];
	int i;

	for (i = 0; i < s->ntopics; i++)
		if (strcmp(s->topics[i].kind, kind) == 0)
			return i;
	if (s->ntopics == KAFKA_MAX_TOPICS)
		return -1;
	snprintf(name, sizeof(name), "%s%s", s->prefix, kind);
	s->topics[i].rkt = rd_kafka_topic_new(s->rk, name, NULL);
	if (!s->topics[i].rkt)
		return -1;
	snprintf(s->topics[i].kind, sizeof(s->topics[i].kind), "%s", kind);
	s->ntopics++;
	return i;
}

/* The "node" header: the node record__begin was given, so header and
 * body always agree. Falls back to the host name for a record built
 * without one. */
static const char *record_node(const struct sink *s, const struct record *r)
{
	return r->node ? r->node : s->hostname;
}

static rd_kafka_resp_err_t kafka__produce(struct sink *s, int topic,
					  const struct kafka_msg *m)
{
	const char *kind = s->topics[topic].kind;

	/* An empty key (records about no process) lets the partitioner
	 * spread them instead of piling them on one partition. */
	return rd_kafka_producev(
		s->rk, RD_KAFKA_V_RKT(s->topics[topic].rkt),
		RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
		RD_KAFKA_V_KEY(m->klen ? m->key : NULL, m->klen),
		RD_KAFKA_V_VALUE((void *)m->val, m->vlen),
		RD_KAFKA_V_HEADER("kind", kind, strlen(kind)),
		RD_KAFKA_V_HEADER("node", m->node, m->nlen),
		RD_KAFKA_V_HEADER("service", m->service, m->slen),
		RD_KAFKA_V_END);
}

/* A produce error other than QUEUE_FULL: the record will never go. */
static int kafka__fail(struct sink *s, rd_kafka_resp_err_t err)
{
	s->failed++;
	if (kafka__may_log(s, err))
		log_info("kafka: %s: cannot produce: %s", s->brokers,
			 rd_kafka_err2str(err));
	return err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ? -EMSGSIZE : -EIO;
}

static void backlog_pop(struct sink *s)
{
	struct backlog_entry *e = s->head;

	s->head = e->next;
	if (!s->head)
		s->tail = NULL;
	s->backlog_msgs--;
	s->backlog_bytes -= e->klen + e->vlen + e->nlen + e->slen;
	free(e);
}

/* Hands waiting records to librdkafka, oldest first, until it is full. */
static void backlog_drain(struct sink *s)
{
	rd_kafka_resp_err_t err;

	while (s->head) {
		struct backlog_entry *e = s->head;

		struct kafka_msg m = { .key = e->data, .klen = e->klen };

		m.val = m.key + m.klen;
		m.vlen = e->vlen;
		m.node = m.val + m.vlen;
		m.nlen = e->nlen;
		m.service = m.node + m.nlen;
		m.slen = e->slen;
		err = kafka__produce(s, e->topic, &m);
		if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			return;
		if (err)
			kafka__fail(s, err);
		backlog_pop(s);
	}
}

/* DROP_OLDEST: queue m behind what already waits, dropping the oldest
 * waiting records to stay within the bound. */
static int backlog_push(struct sink *s, int topic, const struct kafka_msg *m)
{
	size_t size = m->klen + m->vlen + m->nlen + m->slen;
	struct backlog_entry *e;
	char *p;

	if (size > s->backlog_max_bytes) {
		s->failed++;
		s->dropped++;
		return -ENOBUFS;
	}
	while (s->head && (s->backlog_msgs + 1 > s->backlog_max_msgs ||
			   s->backlog_bytes + size > s->backlog_max_bytes)) {
		backlog_pop(s);
		s->failed++;
		s->dropped++;
	}
	e = malloc(sizeof(*e) + size);
	if (!e) {
		s->failed++;
		return -ENOMEM;
	}
	e->next = NULL;
	e->topic = topic;
	e->klen = m->klen;
	e->vlen = m->vlen;
	e->nlen = m->nlen;
	e->slen = m->slen;
	p = mempcpy(e->data, m->key, m->klen);
	p = mempcpy(p, m->val, m->vlen);
	p = mempcpy(p, m->node, m->nlen);
	memcpy(p, m->service, m->slen);
	if (s->tail)
		s->tail->next = e;
	else
		s->head = e;
	s->tail = e;
	s->backlog_msgs++;
	s->backlog_bytes += size;
	return 0;
}

/* A tcp record's exchange: its req_seq, the sequence number of the
 * request's first byte, which the client's record and the server's hold
 * alike (docs/kafka.md). Its digits as kmond wrote them are the key, so
 * both ends of an exchange go to one partition, however their nodes are
 * named or addressed. The field name cannot occur elsewhere in the
 * record: a quote inside a string value is escaped. Returns the digits'
 * length, 0 when there are none. */
static size_t exchange_key(const struct record *r, const char **key)
{
	static const char field[] = "\"req_seq\":";
	const char *p, *end = r->json.buf + r->json.len;
	size_t n = 0;

	p = memmem(r->json.buf, r->json.len, field, sizeof(field) - 1);
	if (!p)
		return 0;
	p += sizeof(field) - 1;
	while (p + n < end && p[n] >= '0' && p[n] <= '9')
		n++;
	*key = p;
	return n;
}

static void record_msg(const struct sink *s, const struct record *r,
		       struct kafka_msg *m)
{
	m->service = r->key;
	m->slen = strlen(r->key);
	m->key = m->service;
	m->klen = m->slen;
	m->val = r->json.buf;
	m->vlen = r->json.len;
	m->node = record_node(s, r);
	m->nlen = strlen(m->node);
	if (s->tcp_key == KAFKA_TCP_KEY_EXCHANGE &&
	    strcmp(r->kind, "tcp") == 0) {
		const char *key;
		size_t klen = exchange_key(r, &key);

		if (klen) {
			m->key = key;
			m->klen = klen;
		}
	}
}

static int kafka__send(struct sink *s, const struct record *r)
{
	rd_kafka_resp_err_t err;
	struct kafka_msg m;
	int topic;

	s->sent++;
	/* Serving delivery reports first frees queue space for r. */
	rd_kafka_poll(s->rk, 0);
	topic = kafka__topic(s, r->kind);
	if (topic < 0)
		return kafka__fail(s, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC);
	record_msg(s, r, &m);

	if (s->head) {
		backlog_drain(s);
		if (s->head)
			return backlog_push(s, topic, &m);
	}
	err = kafka__produce(s, topic, &m);
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
		if (s->drop == DROP_OLDEST)
			return backlog_push(s, topic, &m);
		s->failed++;
		s->dropped++;
		return -ENOBUFS;
	}
	return err ? kafka__fail(s, err) : 0;
}

static uint64_t kafka__queued(const struct sink *s)
{
	return s->sent - s->delivered - s->failed;
}

/* Gives up on everything not delivered yet: purged messages come back
 * as failed delivery reports, the FIFO is counted here. */
static void kafka__abandon(struct sink *s)
{
	uint64_t n = kafka__queued(s);
	uint64_t deadline = mono_ns() + KAFKA_PURGE_WAIT_MS * 1000000ULL;

	if (!n)
		return;
	while (s->head) {
		backlog_pop(s);
		s->failed++;
	}
	rd_kafka_purge(s->rk, RD_KAFKA_PURGE_F_QUEUE |
				      RD_KAFKA_PURGE_F_INFLIGHT |
				      RD_KAFKA_PURGE_F_NON_BLOCKING);
	while (kafka__queued(s) && mono_ns() < deadline)
		rd_kafka_poll(s->rk, 10);
	log_info("kafka: %s: %llu records not delivered", s->brokers,
		 (unsigned long long)n);
}

/* timeout_ms 0: serve callbacks and move the FIFO along, nothing more.
 * Otherwise this is the final flush (exit, or the old sinks of a reload):
 * wait up to timeout_ms, capped by the exporter's own flush_timeout, for
 * every record, then give up on the rest and count it failed. */
static void kafka__flush(struct sink *s, int timeout_ms)
{
	uint64_t wait_ms, deadline, now;

	if (!s)
		return;
	rd_kafka_poll(s->rk, 0);
	backlog_drain(s);
	if (timeout_ms <= 0)
		return;
	wait_ms = (uint64_t)timeout_ms < s->flush_timeout_ms ?
			  (uint64_t)timeout_ms :
			  s->flush_timeout_ms;
	deadline = mono_ns() + wait_ms * 1000000ULL;
	while (kafka__queued(s) && (now = mono_ns()) < deadline) {
		uint64_t left_ms = (deadline - now) / 1000000ULL;

		rd_kafka_flush(s->rk, left_ms < KAFKA_FLUSH_STEP_MS ?
					      (int)left_ms + 1 :
					      KAFKA_FLUSH_STEP_MS);
		backlog_drain(s);
	}
	kafka__abandon(s);
}

static void kafka__stats(struct sink *s, struct sink_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	rd_kafka_poll(s->rk, 0);
	st->sent = s->sent;
	st->delivered = s->delivered;
	st->failed = s->failed;
	st->dropped = s->dropped;
	st->queued = kafka__queued(s);
}

static void kafka__close(struct sink *s)
{
	int i;

	if (!s)
		return;
	if (s->rk) {
		rd_kafka_poll(s->rk, 0);
		kafka__abandon(s);
		for (i = 0; i < s->ntopics; i++)
			rd_kafka_topic_destroy(s->topics[i].rkt);
		rd_kafka_destroy(s->rk);
	}
	free(s->brokers);
	free(s->prefix);
	free(s);
}

const struct sink_ops kafka_sink_ops = {
	.type = "kafka",
	.open = kafka__open,
	.send = kafka__send,
	.flush = kafka__flush,
	.reopen = NULL,
	.stats = kafka__stats,
	.close = kafka__close,
};
