// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A simulated fleet: the tcp records that the kmonds of N nodes running
 * one microservice application would write, into Kafka (<prefix>tcp,
 * keyed by req_seq as kmond keys them) or a file, with the ground truth
 * of every span. What kmon-trace's group is judged on (bench/fleet.sh).
 *
 *   fleet_gen (-b BROKERS [-p PREFIX] | -o FILE) -t TRUTH [-n NODES]
 *             [-r REQUESTS] [-R RATE] [-f] [-s SEED]
 *
 * RATE front requests a second of the application's time (about 16.7
 * records each), written at that pace, or as fast as Kafka takes them
 * with -f (a stream written first, read later).
 *
 * The application: 14 services in 5 tiers. External clients call the
 * gateway; the gateway calls frontend or mobile-api; those fan out (in
 * parallel) to the middle tier, which calls a back tier and the data
 * stores (redis, postgres); a few calls go to an external API no kmond
 * watches. Each service runs on NODES/14 nodes; a call goes to a replica
 * at random, through a service address that a destination NAT sends to
 * the replica (the client's record names the service address, the
 * server's its own). A call answered 5xx is retried once, on a new
 * connection. Outcomes as docs/design/outcomes.md says kmond writes them.
 *
 * Realism: each node's clock is off by up to +-5 ms; each node's records
 * reach Kafka in the order kmond would write them plus the node's own
 * lag (0 to 2 s) and jitter (0 to 100 ms), 0.1% of them 5 s late; and one
 * node goes silent (writes nothing) for the middle third of the run.
 *
 * TRUTH: one line per span, "id parent trace side produced": parent is
 * the true parent (a server span's: its caller's client span; a client
 * span's: the request it was made for; - for none), trace the record's
 * own trace, produced 0 when the record never reached Kafka (the silent
 * node). bench/fleet_score.py scores kmon-trace's traces against it. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "lib/hash.h"
#include "lib/strbuf.h"

#define NSVC 14
#define MAX_CALLS 4
#define NS 1000000000ULL
#define MS 1000000ULL
#define US 1000ULL

enum proto { HTTP, REDIS, PG };

struct service {
	const char *name;
	enum proto proto;
	uint64_t work_ns; /* mean own work */
	int calls[MAX_CALLS]; /* services it may call, -1: none */
	double p[MAX_CALLS]; /* the chance of each call */
	bool parallel; /* its calls go out at once (fan-out) */
};

enum {
	GATEWAY,
	FRONTEND,
	MOBILE,
	CATALOG,
	CART,
	CHECKOUT,
	USERS,
	SEARCH,
	PAYMENTS,
	INVENTORY,
	RECOMMEND,
	AUTH,
	REDIS_SVC,
	POSTGRES_SVC,
	EXTERNAL = 99
};

static const struct service svcs[NSVC] = {
	[GATEWAY] = { "gateway",
		      HTTP,
		      100 * US,
		      { FRONTEND, MOBILE, -1, -1 },
		      { 0.7, 0.3 },
		      false },
	[FRONTEND] = { "frontend",
		       HTTP,
		       300 * US,
		       { USERS, CATALOG, SEARCH, CHECKOUT },
		       { 0.9, 0.8, 0.4, 0.1 },
		       true },
	[MOBILE] = { "mobile-api",
		     HTTP,
		     200 * US,
		     { USERS, CART, CATALOG, -1 },
		     { 0.9, 0.5, 0.5 },
		     true },
	[CATALOG] = { "catalog",
		      HTTP,
		      400 * US,
		      { POSTGRES_SVC, RECOMMEND, REDIS_SVC, -1 },
		      { 0.9, 0.5, 0.6 },
		      false },
	[CART] = { "cart",
		   HTTP,
		   200 * US,
		   { INVENTORY, REDIS_SVC, -1, -1 },
		   { 0.7, 0.9 },
		   false },
	[CHECKOUT] = { "checkout",
		       HTTP,
		       500 * US,
		       { PAYMENTS, INVENTORY, USERS, -1 },
		       { 1.0, 1.0, 0.5 },
		       false },
	[USERS] = { "users",
		    HTTP,
		    150 * US,
		    { AUTH, POSTGRES_SVC, -1, -1 },
		    { 0.8, 0.5 },
		    false },
	[SEARCH] = { "search",
		     HTTP,
		     600 * US,
		     { REDIS_SVC, -1, -1, -1 },
		     { 0.9 },
		     false },
	[PAYMENTS] = { "payments",
		       HTTP,
		       800 * US,
		       { POSTGRES_SVC, EXTERNAL, -1, -1 },
		       { 1.0, 1.0 },
		       false },
	[INVENTORY] = { "inventory",
			HTTP,
			200 * US,
			{ POSTGRES_SVC, -1, -1, -1 },
			{ 1.0 },
			false },
	[RECOMMEND] = { "recommend",
			HTTP,
			700 * US,
			{ REDIS_SVC, -1, -1, -1 },
			{ 1.0 },
			false },
	[AUTH] = { "auth",
		   HTTP,
		   100 * US,
		   { REDIS_SVC, -1, -1, -1 },
		   { 1.0 },
		   false },
	[REDIS_SVC] = { "redis",
			REDIS,
			30 * US,
			{ -1, -1, -1, -1 },
			{ 0 },
			false },
	[POSTGRES_SVC] = { "postgres",
			   PG,
			   300 * US,
			   { -1, -1, -1, -1 },
			   { 0 },
			   false },
};

struct node {
	char name[16], addr[24];
	uint64_t id_prefix; /* the top 24 bits of its ids */
	uint64_t serial;
	int64_t skew_ns;
	uint64_t lag_ns;
};

/* A record waiting for the time its node hands it to Kafka. */
struct pending {
	uint64_t emit_ns;
	uint32_t req_seq;
	char *json;
	uint32_t len;
};

struct gen {
	struct node *nodes;
	int nnodes;
	uint64_t rng;
	uint64_t silent_from, silent_to; /* true time, node 1 */
	struct pending *heap;
	size_t nheap, capheap;
	FILE *truth, *out;
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	struct strbuf sb;
	uint64_t records, dropped, requests;
};

static uint64_t rnd(struct gen *g)
{
	/* xorshift64* */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ULL;
}

static double unit(struct gen *g)
{
	return (rnd(g) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t expo(struct gen *g, uint64_t mean)
{
	double u = unit(g);

	return (uint64_t)(-(double)mean * log(1.0 - u * 0.999));
}

/* --- the order records reach Kafka --- */

static bool before(const struct pending *a, const struct pending *b)
{
	return a->emit_ns < b->emit_ns;
}

static void heap_push(struct gen *g, struct pending p)
{
	size_t i;

	if (g->nheap == g->capheap) {
		g->capheap = g->capheap ? g->capheap * 2 : 4096;
		g->heap = realloc(g->heap, g->capheap * sizeof(*g->heap));
	}
	i = g->nheap++;
	while (i && before(&p, &g->heap[(i - 1) / 2])) {
		g->heap[i] = g->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	g->heap[i] = p;
}

static struct pending heap_pop(struct gen *g)
{
	struct pending top = g->heap[0], last = g->heap[--g->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < g->nheap) {
		if (c + 1 < g->nheap && before(&g->heap[c + 1], &g->heap[c]))
			c++;
		if (!before(&g->heap[c], &last))
			break;
		g->heap[i] = g->heap[c];
		i = c;
	}
	if (g->nheap)
		g->heap[i] = last;
	return top;
}

static void ship(struct gen *g, struct pending *p)
{
	char key[16];
	int klen;

	if (g->out) {
		fwrite(p->json, 1, p->len, g->out);
		fputc('\n', g->out);
	} else {
		klen = snprintf(key, sizeof(key), "%u", p->req_seq);
		while (rd_kafka_produce(g->rkt, RD_KAFKA_PARTITION_UA,
					RD_KAFKA_MSG_F_FREE, p->json, p->len,
					key, klen, NULL) == -1)
			rd_kafka_poll(g->rk, 10); /* queue full */
		p->json = NULL; /* librdkafka frees it */
	}
	free(p->json);
	g->records++;
}

/* Everything a node would have handed over by time t. */
static void ship_until(struct gen *g, uint64_t t)
{
	while (g->nheap && g->heap[0].emit_ns <= t) {
		struct pending p = heap_pop(g);

		ship(g, &p);
	}
	if (g->rk)
		rd_kafka_poll(g->rk, 0);
}

/* --- records --- */

struct span_rec {
	int node;
	int svc; /* the process's service */
	int peer; /* the server's service (its protocol), EXTERNAL */
	bool client;
	uint64_t id, parent, t0, t1;
	uint64_t trace_hi, trace_lo;
	const char *laddr, *raddr, *dst;
	int lport, rport;
	uint32_t req_seq, resp_seq;
	int status; /* http: the status; redis, postgres: 1 for an error */
};

static enum proto proto_of(int svc)
{
	return svc == EXTERNAL ? HTTP : svcs[svc].proto;
}

static void add_outcome(struct gen *g, const struct span_rec *r)
{
	enum proto p = proto_of(r->peer);

	if (p == HTTP) {
		/* server side: 5xx is an error; client side: 4xx too */
		strbuf__addf(&g->sb,
			     ",\"status\":%d,\"error\":%s,\"method\":\"GET\","
			     "\"route\":\"/%s/{id}\"",
			     r->status,
			     r->status >= (r->client ? 400 : 500) ? "true" :
								    "false",
			     r->peer == EXTERNAL ? "api" : svcs[r->peer].name);
	} else if (r->status) {
		strbuf__addf(&g->sb, ",\"status\":\"%s\",\"error\":true",
			     p == REDIS ? "WRONGTYPE" : "42601");
	} else {
		strbuf__adds(&g->sb, ",\"error\":false");
	}
}

static void emit(struct gen *g, const struct span_rec *r)
{
	const struct node *n = &g->nodes[r->node];
	enum proto p = proto_of(r->peer);
	bool produced = !(r->node == 1 && r->t1 >= g->silent_from &&
			  r->t1 < g->silent_to);
	const char *name = svcs[r->svc].name;
	struct pending pd;

	fprintf(g->truth,
		"%016" PRIx64 " %016" PRIx64 " %016" PRIx64 "%016" PRIx64
		" %s %d\n",
		r->id, r->parent, r->trace_hi, r->trace_lo,
		r->client ? "client" : "server", produced);
	if (!produced) {
		g->dropped++;
		return;
	}
	strbuf__reset(&g->sb);
	strbuf__addf(&g->sb,
		     "{\"kind\":\"tcp\",\"ts\":%" PRIu64 ",\"node\":\"%s\","
		     "\"pid\":%d,\"comm\":\"%.15s\",\"service\":\"%s\","
		     "\"tid\":%d,\"family\":\"ipv4\",\"laddr\":\"%s\","
		     "\"lport\":%d,\"raddr\":\"%s\",\"rport\":%d,"
		     "\"latency_ns\":%" PRIu64 ",\"req_bytes\":%d,"
		     "\"resp_bytes\":%d,\"side\":\"%s\",\"req_seq\":%u,"
		     "\"resp_seq\":%u,\"protocol\":\"%s\"",
		     r->t1 + n->skew_ns, n->name, 1000 + r->svc, name, name,
		     1000 + r->svc, r->laddr, r->lport, r->raddr, r->rport,
		     r->t1 - r->t0, 100 + (int)(r->id % 300),
		     200 + (int)(r->id % 4000), r->client ? "client" : "server",
		     r->req_seq, r->resp_seq,
		     p == HTTP	? "http" :
		     p == REDIS ? "redis" :
				  "postgresql");
	add_outcome(g, r);
	strbuf__addf(&g->sb,
		     ",\"id\":\"%016" PRIx64 "\",\"trace\":\"%016" PRIx64
		     "%016" PRIx64 "\"",
		     r->id, r->trace_hi, r->trace_lo);
	if (r->client) {
		strbuf__addf(&g->sb, ",\"dst\":\"%s\"", r->dst);
		if (r->parent)
			strbuf__addf(&g->sb,
				     ",\"parent\":\"%016" PRIx64
				     "\",\"link\":\"thread\"",
				     r->parent);
	}
	strbuf__adds(&g->sb, "}");
	/* kmond writes at the end of a request; its node ships later */
	pd.emit_ns = r->t1 + n->lag_ns + rnd(g) % (100 * MS);
	if (rnd(g) % 1000 == 0)
		pd.emit_ns += 5 * NS;
	pd.req_seq = r->req_seq;
	pd.len = g->sb.len;
	pd.json = malloc(pd.len);
	memcpy(pd.json, g->sb.buf, pd.len);
	heap_push(g, pd);
}

/* --- the application --- */

static uint64_t new_id(struct gen *g, int node)
{
	struct node *n = &g->nodes[node];

	return n->id_prefix << 40 | ++n->serial;
}

/* kmond: a server request starts a trace derived from its own id, as
 * tcp_links__trace makes it (a consumer's keys must cope with that). */
static void trace_of(uint64_t id, uint64_t *hi, uint64_t *lo)
{
	*hi = mix64(id);
	*lo = id;
}

/* Service svc runs on nodes svc, svc + NSVC, svc + 2 NSVC ... */
static int replica(struct gen *g, int svc)
{
	int per = g->nnodes / NSVC;

	return svc + NSVC * (int)(rnd(g) % (uint64_t)(per > 0 ? per : 1));
}

struct caller {
	const char *addr; /* NULL: an external client */
	uint64_t client_id;
	int port;
	uint32_t req_seq, resp_seq;
};

static uint64_t serve(struct gen *g, int svc, int node, uint64_t t0,
		      const struct caller *c, int *status);

/* One call from (svc, node) made for request parent, over a new
 * connection; returns its end, its outcome in *status. */
static uint64_t call(struct gen *g, int svc, int node, uint64_t parent,
		     uint64_t thi, uint64_t tlo, int to, uint64_t t0,
		     int *status)
{
	struct span_rec r = { .node = node,
			      .svc = svc,
			      .peer = to,
			      .client = true,
			      .parent = parent,
			      .t0 = t0,
			      .trace_hi = thi,
			      .trace_lo = tlo };
	struct caller c = { .addr = g->nodes[node].addr };
	static char vip[NSVC][24];

	r.id = c.client_id = new_id(g, node);
	r.laddr = c.addr;
	r.lport = c.port = 32768 + (int)(rnd(g) % 28000);
	r.req_seq = c.req_seq = (uint32_t)rnd(g) | 1;
	r.resp_seq = c.resp_seq = (uint32_t)rnd(g) | 1;
	if (to == EXTERNAL) {
		r.raddr = r.dst = "198.51.100.7";
		r.rport = 443;
		r.t1 = t0 + expo(g, 20 * MS);
		r.status = rnd(g) % 100 == 0 ? 503 : 200;
	} else {
		/* the service's address, which a DNAT sends to a replica */
		snprintf(vip[to], sizeof(vip[to]), "10.96.0.%d", to + 1);
		r.raddr = r.dst = vip[to];
		r.rport = svcs[to].proto == REDIS ? 6379 :
			  svcs[to].proto == PG	  ? 5432 :
						    80;
		r.t1 = serve(g, to, replica(g, to), t0 + 50 * US, &c,
			     &r.status) +
		       50 * US;
	}
	*status = r.status;
	emit(g, &r);
	return r.t1;
}

static bool failed(int to, int status)
{
	return proto_of(to) == HTTP ? status >= 500 : status != 0;
}

/* A request to svc on node; returns its end, its outcome in *status. */
static uint64_t serve(struct gen *g, int svc, int node, uint64_t t0,
		      const struct caller *c, int *status)
{
	const struct service *s = &svcs[svc];
	struct span_rec r = { .node = node, .svc = svc, .peer = svc, .t0 = t0 };
	uint64_t t = t0 + expo(g, s->work_ns) / 2, end = t;
	bool child_failed = false;
	int i, st, tries;

	r.id = new_id(g, node);
	trace_of(r.id, &r.trace_hi, &r.trace_lo);
	r.laddr = g->nodes[node].addr;
	r.lport = s->proto == REDIS ? 6379 : s->proto == PG ? 5432 : 8080;
	r.raddr = c->addr ? c->addr : "203.0.113.9";
	r.rport = c->port;
	r.req_seq = c->req_seq;
	r.resp_seq = c->resp_seq;
	r.parent = c->client_id;
	for (i = 0; i < MAX_CALLS && s->calls[i] >= 0; i++) {
		uint64_t start = s->parallel ? t : end, e;

		if (unit(g) >= s->p[i])
			continue;
		for (tries = 0; tries < 2; tries++) { /* one retry on failure */
			e = call(g, svc, node, r.id, r.trace_hi, r.trace_lo,
				 s->calls[i], start, &st);
			if (!failed(s->calls[i], st))
				break;
			start = e;
		}
		child_failed |= failed(s->calls[i], st);
		if (e > end)
			end = e;
	}
	r.t1 = end + expo(g, s->work_ns) / 2;
	if (s->proto == HTTP)
		r.status = child_failed && rnd(g) % 2 ? 502 :
			   rnd(g) % 200 == 0	      ? 500 :
			   rnd(g) % 100 == 0	      ? 404 :
							200;
	else
		r.status = rnd(g) % 500 == 0;
	*status = r.status;
	emit(g, &r);
	return r.t1;
}

/* --- main --- */

static void usage(void)
{
	fprintf(stderr,
		"usage: fleet_gen (-b BROKERS [-p PREFIX] | -o FILE) -t TRUTH "
		"[-n NODES] [-r REQUESTS]\n"
		"                 [-R REQUESTS_PER_S] [-f] [-s SEED]\n");
	exit(2);
}

static uint64_t undelivered;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
			void *opaque)
{
	(void)rk;
	(void)opaque;
	if (m->err && !undelivered++)
		fprintf(stderr, "fleet_gen: %s\n", rd_kafka_err2str(m->err));
}

static rd_kafka_t *producer(const char *brokers)
{
	const char *props[][2] = {
		{ "bootstrap.servers", brokers },
		{ "linger.ms", "20" },
		{ "batch.num.messages", "10000" },
		{ "queue.buffering.max.messages", "1000000" },
		{ "queue.buffering.max.kbytes", "1048576" },
	};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
		if (rd_kafka_conf_set(conf, props[i][0], props[i][1], err,
				      sizeof(err))) {
			fprintf(stderr, "fleet_gen: %s\n", err);
			exit(1);
		}
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	return rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *brokers = NULL, *prefix = "kmon.", *out = NULL;
	const char *truth = NULL;
	uint64_t requests = 10000, rate = 1000, seed = 1, t, step, start;
	bool fast = false;
	struct gen g = { .nnodes = 1000 };
	char topic[256];
	int c, i;

	while ((c = getopt(argc, argv, "b:p:o:t:n:r:R:fs:")) != -1) {
		switch (c) {
		case 'b':
			brokers = optarg;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			truth = optarg;
			break;
		case 'n':
			g.nnodes = atoi(optarg);
			break;
		case 'r':
			requests = strtoull(optarg, NULL, 10);
			break;
		case 'R':
			rate = strtoull(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			fast = true;
			break;
		default:
			usage();
		}
	}
	if (!brokers == !out || !truth || g.nnodes < NSVC || !rate)
		usage();
	g.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	g.truth = fopen(truth, "w");
	if (out)
		g.out = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!g.truth || (out && !g.out)) {
		perror("fleet_gen");
		return 1;
	}
	if (brokers) {
		g.rk = producer(brokers);
		snprintf(topic, sizeof(topic), "%stcp", prefix);
		g.rkt = rd_kafka_topic_new(g.rk, topic, NULL);
	}
	g.nodes = calloc(g.nnodes, sizeof(*g.nodes));
	for (i = 0; i < g.nnodes; i++) {
		struct node *n = &g.nodes[i];

		snprintf(n->name, sizeof(n->name), "node-%04d", i);
		snprintf(n->addr, sizeof(n->addr), "10.%d.%d.%d",
			 (i >> 16) & 255, (i >> 8) & 255, i & 255);
		n->id_prefix = (rnd(&g) >> 40) | 1;
		n->skew_ns = (int64_t)(rnd(&g) % (10 * MS)) - (int64_t)(5 * MS);
		n->lag_ns = rnd(&g) % (2 * NS);
	}
	/* front requests every 1/rate s of the application's time (which is
	 * ns since 2026-11-28), shipped at that pace in wall time too */
	t = 1795900000ULL * NS;
	step = NS / rate;
	g.silent_from = t + requests * step / 3;
	g.silent_to = t + 2 * requests * step / 3;
	start = wall_ns();
	for (g.requests = 0; g.requests < requests; g.requests++, t += step) {
		struct caller ext = { .port = 1024 + (int)(rnd(&g) % 60000),
				      .req_seq = (uint32_t)rnd(&g) | 1,
				      .resp_seq = (uint32_t)rnd(&g) | 1 };
		int st;

		serve(&g, GATEWAY, replica(&g, GATEWAY), t, &ext, &st);
		ship_until(&g, t);
		if (g.rk && !fast && (g.requests & 1023) == 0) {
			uint64_t due = start + g.requests * step;

			while (wall_ns() < due)
				rd_kafka_poll(g.rk, 1);
		}
	}
	ship_until(&g, UINT64_MAX);
	if (g.rk) {
		rd_kafka_flush(g.rk, 60000);
		rd_kafka_topic_destroy(g.rkt);
		rd_kafka_destroy(g.rk);
	}
	fprintf(stderr,
		"fleet_gen: %d nodes, %" PRIu64 " front requests, %" PRIu64
		" records written (%" PRIu64 " undelivered), %" PRIu64
		" not (node-0001 silent), %.1f s\n",
		g.nnodes, requests, g.records, undelivered, g.dropped,
		(wall_ns() - start) / 1e9);
	fclose(g.truth);
	if (g.out && g.out != stdout)
		fclose(g.out);
	strbuf__free(&g.sb);
	free(g.heap);
	free(g.nodes);
	return 0;
}
