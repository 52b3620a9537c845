/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A downstream consumer's membership in a Kafka consumer group, shared by
 * kmon-topo and kmon-trace. */
#ifndef KMON_KAFKA_GROUP_H
#define KMON_KAFKA_GROUP_H

#include <stdbool.h>

#include <librdkafka/rdkafka.h>

/* A member that handles its own rebalances (kafka_group_opts.member):
 * its state begins with this. */
struct kafka_member {
	const char *who; /* the program, first word of its messages */
};

typedef void (*kafka_rebalance_fn)(rd_kafka_t *rk, rd_kafka_resp_err_t err,
				   rd_kafka_topic_partition_list_t *parts,
				   void *member);

struct kafka_group_opts {
	const char *who; /* the program, first word of its messages */
	/* NULL: librdkafka's own rebalancing. Else rebalance is called with
	 * member on every change of assignment (rd_kafka_conf_set_rebalance_cb:
	 * it assigns). */
	struct kafka_member *member;
	kafka_rebalance_fn rebalance;
	/* Learn where each partition ends (PARTITION_EOF messages); a
	 * member always does. */
	bool ends;
	const char *brokers;
	const char *group;
	const char *const (*props)[2]; /* -X name=value, after ours */
	int nprops;
};

/* -X name=value: splits arg in place into props[*nprops] (at most max
 * entries). Returns 0, or -1 for no '=', no name or one too many. */
int kafka_group__parse_prop(char *arg, const char *props[][2], int *nprops,
			    int max);

/* A consumer of group o->group that starts from the group's committed
 * offsets (the earliest for a new group) and waits for topics kmond has
 * not written yet. Returns NULL with the reason printed (a property
 * librdkafka refuses). */
rd_kafka_t *kafka_group__new(const struct kafka_group_opts *o);
/* Subscribes rk to topic. Returns 0, or -1 with the reason printed. */
int kafka_group__subscribe(rd_kafka_t *rk, const char *who, const char *topic);
/* Subscribes rk to n topics at once. Returns 0, or -1 as above. */
int kafka_group__subscribe_all(rd_kafka_t *rk, const char *who,
			       const char *const *topics, int n);

#endif
