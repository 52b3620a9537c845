// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "consumers/common/kafka_group.h"
#include "lib/array.h"

/* A broker that stays away repeats its error at every reconnect: one line
 * per error and 10 s. */
static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	const char *who = opaque;
	static int last_err;
	static time_t last;
	time_t now = time(NULL);

	(void)rk;
	if (err == last_err && now - last < 10)
		return;
	last_err = err;
	last = now;
	fprintf(stderr, "%s: kafka: %s\n", who, reason);
}

static void member_error_cb(rd_kafka_t *rk, int err, const char *reason,
			    void *opaque)
{
	const struct kafka_member *m = opaque;

	error_cb(rk, err, reason, (void *)m->who);
}

rd_kafka_t *kafka_group__new(const struct kafka_group_opts *o)
{
	/* allow.auto.create.topics and a short metadata refresh: a consumer
	 * may start before any kmond has written its topic. */
	const char *defaults[][2] = {
		{ "bootstrap.servers", o->brokers },
		{ "group.id", o->group },
		{ "auto.offset.reset", "earliest" },
		{ "allow.auto.create.topics", "true" },
		{ "topic.metadata.refresh.interval.ms", "5000" },
		{ "log.connection.close", "false" },
	};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char errstr[512];
	rd_kafka_t *rk;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defaults); i++)
		if (rd_kafka_conf_set(conf, defaults[i][0], defaults[i][1],
				      errstr, sizeof(errstr)))
			goto fail;
	for (i = 0; i < (size_t)o->nprops; i++)
		if (rd_kafka_conf_set(conf, o->props[i][0], o->props[i][1],
				      errstr, sizeof(errstr)))
			goto fail;
	if ((o->member || o->ends) &&
	    rd_kafka_conf_set(conf, "enable.partition.eof", "true", errstr,
			      sizeof(errstr)))
		goto fail;
	if (o->member) {
		/* it commits what it has done, when it has done it, and
		 * learns where a partition ends (above) */
		if (rd_kafka_conf_set(conf, "enable.auto.commit", "false",
				      errstr, sizeof(errstr)))
			goto fail;
		rd_kafka_conf_set_error_cb(conf, member_error_cb);
		rd_kafka_conf_set_rebalance_cb(conf, o->rebalance);
		rd_kafka_conf_set_opaque(conf, o->member);
	} else {
		rd_kafka_conf_set_error_cb(conf, error_cb);
		rd_kafka_conf_set_opaque(conf, (void *)o->who);
	}
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
	if (!rk)
		goto fail;
	rd_kafka_poll_set_consumer(rk);
	return rk;
fail:
	rd_kafka_conf_destroy(conf);
	fprintf(stderr, "%s: %s\n", o->who, errstr);
	return NULL;
}

int kafka_group__subscribe_all(rd_kafka_t *rk, const char *who,
			       const char *const *topics, int n)
{
	rd_kafka_topic_partition_list_t *list;
	rd_kafka_resp_err_t err;
	int i;

	list = rd_kafka_topic_partition_list_new(n);
	for (i = 0; i < n; i++)
		rd_kafka_topic_partition_list_add(list, topics[i],
						  RD_KAFKA_PARTITION_UA);
	err = rd_kafka_subscribe(rk, list);
	rd_kafka_topic_partition_list_destroy(list);
	if (err) {
		fprintf(stderr, "%s: cannot subscribe to %s%s: %s\n", who,
			topics[0], n > 1 ? " ..." : "", rd_kafka_err2str(err));
		return -1;
	}
	return 0;
}

int kafka_group__subscribe(rd_kafka_t *rk, const char *who, const char *topic)
{
	return kafka_group__subscribe_all(rk, who, &topic, 1);
}

int kafka_group__parse_prop(char *arg, const char *props[][2], int *nprops,
			    int max)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || *nprops == max)
		return -1;
	*eq = '\0';
	props[*nprops][0] = arg;
	props[(*nprops)++][1] = eq + 1;
	return 0;
}
