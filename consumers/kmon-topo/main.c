// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmon-topo: the fleet-wide service graph. A Kafka consumer (one member
 * of a consumer group) reads <prefix>topology from every kmond node,
 * merges the edges (graph.h) and prints the graph as one JSON line every
 * interval and at exit, and as Graphviz DOT.
 *
 *   kmon-topo -b BROKERS [-p PREFIX] [-g GROUP] [--fleet] [--dot FILE]
 *             [--json FILE] [--interval DURATION] [--duration DURATION]
 *             [-X prop=value]...
 *
 * With --fleet, members of one group each read some partitions and
 * together print one graph, the same as one member's (fleet.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "consumers/common/cli.h"
#include "consumers/common/kafka_group.h"
#include "fleet.h"
#include "graph.h"
#include "lib/clock.h"
#include "lib/record.h"
#include "lib/strbuf.h"

#define MAX_PROPS 64
/* Bad records: the first ones are shown, then only counted. */
#define SHOW_REJECTED 10

struct opts {
	const char *brokers;
	const char *prefix;
	const char *group;
	const char *dot;
	const char *json;
	uint64_t interval_ns;
	uint64_t checkpoint_ns; /* --fleet: between checkpoints, 0: none */
	uint64_t duration_ns; /* 0: until SIGINT/SIGTERM */
	bool fleet;
	const char *props[MAX_PROPS][2];
	int nprops;
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kmon-topo -b BROKERS [-p PREFIX] [-g GROUP] [--fleet] "
		"[--dot FILE] [--json FILE]\n"
		"                 [--interval DURATION] [--duration DURATION] "
		"[--checkpoint DURATION]\n"
		"                 [-X prop=value]...\n"
		"  -b, --brokers BROKERS  Kafka bootstrap servers "
		"(host:port,...)\n"
		"  -p, --prefix P         kmond's topic_prefix (default kmon.): "
		"reads Ptopology\n"
		"  -g, --group G          consumer group (default kmon-topo)\n"
		"      --fleet            one member of a group of several: "
		"each reads some\n"
		"                         partitions, all print one graph "
		"(through\n"
		"                         PGROUP.topology_partial)\n"
		"      --checkpoint DURATION  --fleet: time between "
		"checkpoints of the graph\n"
		"                         (PGROUP.topology_checkpoint; default "
		"1m, 0: none)\n"
		"  -o, --dot FILE         write the graph as Graphviz DOT "
		"(replaced at each\n"
		"                         snapshot)\n"
		"  -j, --json FILE        JSON lines, one graph per snapshot "
		"(default - = stdout)\n"
		"      --interval DURATION  time between snapshots (default "
		"10s)\n"
		"  -d, --duration DURATION  run for DURATION, then print the "
		"graph and exit\n"
		"  -X prop=value          any librdkafka consumer property\n"
		"  -i DURATION            old spelling of --interval "
		"(deprecated)\n"
		"DURATION: 250ms, 5s, 1m, 1h; a bare number is seconds (0.5)\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { OPT_INTERVAL = 256, OPT_FLEET, OPT_CHECKPOINT };
	static const struct option longopts[] = {
		{ "brokers", required_argument, NULL, 'b' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "group", required_argument, NULL, 'g' },
		{ "dot", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "fleet", no_argument, NULL, OPT_FLEET },
		{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	*o = (struct opts){ .prefix = "kmon.",
			    .group = "kmon-topo",
			    .json = "-",
			    .interval_ns = 10000000000ULL,
			    .checkpoint_ns = 60000000000ULL };
	while ((c = getopt_long(argc, argv, "b:p:g:o:j:i:d:X:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b':
			o->brokers = optarg;
			break;
		case 'p':
			o->prefix = optarg;
			break;
		case 'g':
			o->group = optarg;
			break;
		case 'o':
			o->dot = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'i':
			/* -i is kmon-trace's and kmon-view's --input */
			cli__deprecated("kmon-topo", "-i", "--interval");
			/* fall through */
		case OPT_INTERVAL:
			if (cli__duration(optarg, &o->interval_ns))
				goto bad;
			break;
		case OPT_FLEET:
			o->fleet = true;
			break;
		case OPT_CHECKPOINT: /* 0: none */
			if (strcmp(optarg, "0") &&
			    cli__duration(optarg, &o->checkpoint_ns))
				goto bad;
			if (!strcmp(optarg, "0"))
				o->checkpoint_ns = 0;
			break;
		case 'd':
			if (cli__duration(optarg, &o->duration_ns))
				goto bad;
			break;
		case 'X':
			if (kafka_group__parse_prop(optarg, o->props,
						    &o->nprops, MAX_PROPS))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind != argc || !o->brokers)
		goto bad;
	return 0;
bad:
	usage(stderr);
	return -1;
}

static void handle_message(struct topo_graph *g, rd_kafka_message_t *m)
{
	char err[256];

	if (m->err) {
		/* The topic not existing yet is normal before kmond runs. */
		if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF &&
		    m->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
			fprintf(stderr, "kmon-topo: kafka: %s\n",
				rd_kafka_message_errstr(m));
		return;
	}
	if (topo__add_json(g, m->payload, m->len, err, sizeof(err)) &&
	    topo__rejected(g) <= SHOW_REJECTED)
		fprintf(stderr,
			"kmon-topo: %s [%d] offset %lld: rejected: %s%s\n",
			rd_kafka_topic_name(m->rkt), (int)m->partition,
			(long long)m->offset, err,
			topo__rejected(g) == SHOW_REJECTED ?
				" (further rejects only counted)" :
				"");
}

/* Replaces path with the DOT graph (a reader never sees half a file). */
static int write_dot(struct topo_graph *g, const char *path)
{
	struct strbuf sb = { 0 };
	char tmp[4096];
	FILE *f;
	int ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	topo__dot(g, &sb);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "kmon-topo: %s: %s\n", tmp, strerror(errno));
		strbuf__free(&sb);
		return -1;
	}
	ok = fwrite(sb.buf, 1, sb.len, f) == sb.len;
	ok = (fclose(f) == 0) && ok;
	strbuf__free(&sb);
	if (!ok || rename(tmp, path)) {
		fprintf(stderr, "kmon-topo: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int snapshot(struct topo_graph *g, const struct opts *o, FILE *json,
		    const char *host)
{
	struct record r;
	int err = 0;

	record__init(&r);
	topo__json(g, clock_ns(CLOCK_REALTIME), host, &r);
	if (fwrite(r.json.buf, 1, r.json.len, json) != r.json.len ||
	    fputc('\n', json) == EOF || fflush(json)) {
		fprintf(stderr, "kmon-topo: %s: %s\n", o->json,
			strerror(errno));
		err = -1;
	}
	record__free(&r);
	if (o->dot && write_dot(g, o->dot))
		err = -1;
	return err;
}

static int run(rd_kafka_t *rk, struct topo_graph *g, const struct opts *o,
	       FILE *json, const char *host)
{
	uint64_t start = mono_ns(), next, now;
	uint64_t interval = o->interval_ns, duration = o->duration_ns;

	next = start + interval;
	while (!exiting) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);

		if (m) {
			handle_message(g, m);
			rd_kafka_message_destroy(m);
		}
		now = mono_ns();
		if (duration && now - start >= duration)
			break;
		if (now >= next) {
			if (snapshot(g, o, json, host))
				return -1;
			next = now + interval;
		}
	}
	return snapshot(g, o, json, host);
}

static void fleet_stats(const struct topo_fleet *f)
{
	const struct topo_fleet_counts *c = topo_fleet__counts(f);

	fprintf(stderr,
		"kmon-topo: fleet: %llu offsets merged, %llu offsets read "
		"twice, %llu partials written, %llu read, %llu rejected, "
		"%llu rebalances, %llu not produced, %llu commits refused, "
		"%llu assigned at commits, %llu checkpoints written, "
		"%llu loaded, %llu failed, %llu delta offsets gone\n",
		(unsigned long long)c->offsets,
		(unsigned long long)c->read_twice,
		(unsigned long long)c->partials_written,
		(unsigned long long)c->partials_read,
		(unsigned long long)c->partials_rejected,
		(unsigned long long)c->rebalances,
		(unsigned long long)c->produce_failed,
		(unsigned long long)c->commits_failed,
		(unsigned long long)c->catch_up_failed,
		(unsigned long long)c->checkpoints_written,
		(unsigned long long)c->checkpoint_loaded,
		(unsigned long long)c->checkpoints_failed,
		(unsigned long long)c->deltas_gone);
}

static int run_fleet(const struct opts *o, FILE *json, const char *host)
{
	struct topo_fleet *f;
	uint64_t start = mono_ns(), next = start + o->interval_ns, now;
	uint64_t next_checkpoint = start + o->checkpoint_ns;
	int err = 0;

	f = topo_fleet__new(&(struct topo_fleet_opts){ .brokers = o->brokers,
						       .prefix = o->prefix,
						       .group = o->group,
						       .host = host,
						       .props = o->props,
						       .nprops = o->nprops });
	if (!f)
		return 2;
	while (!exiting && !err) {
		topo_fleet__poll(f, 100);
		now = mono_ns();
		if (o->duration_ns && now - start >= o->duration_ns)
			break;
		if (now >= next) {
			topo_fleet__publish(f);
			err = snapshot(topo_fleet__graph(f), o, json, host);
			next = now + o->interval_ns;
		}
		if (o->checkpoint_ns && now >= next_checkpoint) {
			topo_fleet__checkpoint(f, false);
			next_checkpoint = now + o->checkpoint_ns;
		}
	}
	topo_fleet__leave(f);
	if (o->checkpoint_ns)
		topo_fleet__checkpoint(f, true);
	if (snapshot(topo_fleet__graph(f), o, json, host))
		err = 1;
	fleet_stats(f);
	topo_fleet__free(f);
	return err;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct topo_graph *g = NULL;
	rd_kafka_t *rk = NULL;
	FILE *json = stdout;
	char host[256] = "unknown", topic[512];
	struct opts o;
	int err = 1;

	if (parse_opts(argc, argv, &o))
		return 2;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	gethostname(host, sizeof(host) - 1);
	if (strcmp(o.json, "-") != 0) {
		json = fopen(o.json, "a");
		if (!json) {
			fprintf(stderr, "kmon-topo: %s: %s\n", o.json,
				strerror(errno));
			return 1;
		}
	}
	if (o.fleet) {
		err = run_fleet(&o, json, host);
		goto cleanup;
	}
	rk = kafka_group__new(&(struct kafka_group_opts){ .who = "kmon-topo",
							  .brokers = o.brokers,
							  .group = o.group,
							  .props = o.props,
							  .nprops = o.nprops });
	if (!rk) {
		err = 2;
		goto cleanup;
	}
	snprintf(topic, sizeof(topic), "%stopology", o.prefix);
	if (kafka_group__subscribe(rk, "kmon-topo", topic))
		goto cleanup;
	fprintf(stderr, "kmon-topo: reading %s from %s as group %s\n", topic,
		o.brokers, o.group);
	g = topo__new();
	err = run(rk, g, &o, json, host) ? 1 : 0;
	fprintf(stderr, "kmon-topo: %llu records merged, %llu rejected\n",
		(unsigned long long)topo__records(g),
		(unsigned long long)topo__rejected(g));
cleanup:
	if (rk) {
		rd_kafka_consumer_close(rk); /* commits what was read */
		rd_kafka_destroy(rk);
	}
	topo__free(g);
	if (json != stdout)
		fclose(json);
	return err;
}
