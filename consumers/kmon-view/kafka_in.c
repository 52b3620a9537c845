// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Records from Kafka: every partition of <prefix><kind>, from the first
 * message to the end as it is when we start (the high watermark read up
 * front), so a reading ends even while kmond keeps producing. No consumer
 * group: nothing is committed, every run sees everything. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "view.h"
#include "lib/clock.h"

#define KAFKA_TIMEOUT_MS 10000
/* no message for this long while more are due: give up */
#define KAFKA_STALL_MS 15000
#define MAX_PARTS 1024

struct part {
	char topic[256];
	int32_t partition;
	int64_t next; /* offset of the next message we need */
	int64_t end; /* high watermark: done when next >= end */
};

struct kafka_in {
	rd_kafka_t *rk;
	struct part parts[MAX_PARTS];
	int nparts;
};

static rd_kafka_t *kafka_in__new(const char *brokers)
{
	char err[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;

	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "group.id", "kmon-view", err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "enable.partition.eof", "true", err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err))) {
		view__error(brokers, "kafka: %s", err);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	if (!rk) {
		view__error(brokers, "kafka: %s", err);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

/* Adds the partitions of topic that hold messages. A topic the cluster
 * does not know has no records: not an error. */
static int kafka_in__topic(struct kafka_in *k, const char *brokers,
			   const char *topic)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(k->rk, topic, NULL);
	rd_kafka_resp_err_t err;
	int i, ret = 0;

	err = rd_kafka_metadata(k->rk, 0, rkt, &md, KAFKA_TIMEOUT_MS);
	if (err) {
		view__error(brokers, "kafka: metadata of %s: %s", topic,
			    rd_kafka_err2str(err));
		ret = VIEW_RUNTIME;
		goto out;
	}
	if (md->topic_cnt != 1 || md->topics[0].err)
		goto out;
	for (i = 0; i < md->topics[0].partition_cnt; i++) {
		int32_t p = md->topics[0].partitions[i].id;
		int64_t lo, hi;
		struct part *pt;

		err = rd_kafka_query_watermark_offsets(k->rk, topic, p, &lo,
						       &hi, KAFKA_TIMEOUT_MS);
		if (err) {
			view__error(brokers, "kafka: offsets of %s[%d]: %s",
				    topic, p, rd_kafka_err2str(err));
			ret = VIEW_RUNTIME;
			goto out;
		}
		if (hi <= lo)
			continue;
		if (k->nparts == MAX_PARTS) {
			view__error(brokers, "kafka: more than %d partitions",
				    MAX_PARTS);
			ret = VIEW_RUNTIME;
			goto out;
		}
		pt = &k->parts[k->nparts++];
		snprintf(pt->topic, sizeof(pt->topic), "%s", topic);
		pt->partition = p;
		pt->next = lo;
		pt->end = hi;
	}
out:
	if (md)
		rd_kafka_metadata_destroy(md);
	rd_kafka_topic_destroy(rkt);
	return ret;
}

static struct part *kafka_in__part(struct kafka_in *k, const char *topic,
				   int32_t partition)
{
	int i;

	for (i = 0; i < k->nparts; i++)
		if (k->parts[i].partition == partition &&
		    strcmp(k->parts[i].topic, topic) == 0)
			return &k->parts[i];
	return NULL;
}

static bool kafka_in__done(const struct kafka_in *k)
{
	int i;

	for (i = 0; i < k->nparts; i++)
		if (k->parts[i].next < k->parts[i].end)
			return false;
	return true;
}

static int kafka_in__assign(struct kafka_in *k, const char *brokers)
{
	rd_kafka_topic_partition_list_t *list =
		rd_kafka_topic_partition_list_new(k->nparts);
	rd_kafka_resp_err_t err;
	int i;

	for (i = 0; i < k->nparts; i++)
		rd_kafka_topic_partition_list_add(list, k->parts[i].topic,
						  k->parts[i].partition)
			->offset = k->parts[i].next;
	err = rd_kafka_assign(k->rk, list);
	rd_kafka_topic_partition_list_destroy(list);
	if (err) {
		view__error(brokers, "kafka: assign: %s",
			    rd_kafka_err2str(err));
		return VIEW_RUNTIME;
	}
	return 0;
}

static int kafka_in__consume(struct kafka_in *k, const char *brokers,
			     const char *const *kinds, view_record_fn fn,
			     void *ctx)
{
	uint64_t last = mono_ns();
	char where[512];
	int ret = 0;

	while (!ret && !kafka_in__done(k)) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, 500);
		const char *topic;
		struct part *pt;

		if (!m) {
			if (mono_ns() - last > KAFKA_STALL_MS * 1000000ULL) {
				view__error(brokers,
					    "kafka: no message for %d s while "
					    "more are due",
					    KAFKA_STALL_MS / 1000);
				return VIEW_RUNTIME;
			}
			continue;
		}
		last = mono_ns();
		topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "?";
		pt = m->rkt ? kafka_in__part(k, topic, m->partition) : NULL;
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (pt)
				pt->next = pt->end;
		} else if (m->err) {
			view__error(brokers, "kafka: %s: %s", topic,
				    rd_kafka_message_errstr(m));
			ret = VIEW_RUNTIME;
		} else if (pt && m->offset < pt->end) {
			pt->next = m->offset + 1;
			snprintf(where, sizeof(where), "%s[%d]@%lld", topic,
				 (int)m->partition, (long long)m->offset);
			ret = input__message(m->payload ? m->payload : "",
					     m->len, where, kinds, fn, ctx);
		}
		rd_kafka_message_destroy(m);
	}
	return ret;
}

int input__read_kafka(const struct view_opts *o, const char *const *kinds,
		      view_record_fn fn, void *ctx)
{
	struct kafka_in *k = xcalloc(1, sizeof(*k));
	char topic[256], list[1024] = "";
	int i, ret = 0;

	k->rk = kafka_in__new(o->brokers);
	if (!k->rk) {
		ret = VIEW_RUNTIME;
		goto cleanup;
	}
	for (i = 0; !ret && kinds[i]; i++) {
		snprintf(topic, sizeof(topic), "%s%s", o->prefix, kinds[i]);
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? ", " : "", topic);
		ret = kafka_in__topic(k, o->brokers, topic);
	}
	if (ret)
		goto cleanup;
	if (!k->nparts) {
		view__error(o->brokers, "kafka: empty input: no messages in %s",
			    list);
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	ret = kafka_in__assign(k, o->brokers);
	if (!ret)
		ret = kafka_in__consume(k, o->brokers, kinds, fn, ctx);
cleanup:
	if (k->rk) {
		rd_kafka_consumer_close(k->rk);
		rd_kafka_destroy(k->rk);
	}
	free(k);
	return ret;
}
