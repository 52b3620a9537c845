// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/tcp/tcp.h"
#include "collectors/collector.h"
#include "collectors/tcp/outcome_counts.h"
#include "collectors/tcp/proto_track.h"
#include "collectors/tcp/tcp_names.h"
#include "collectors/tcp/tcp_topology.h"
#include "exporters/exporter.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/maps.h"
#include "lib/histogram.h"
#include "lib/log.h"
#include "lib/protocol.h"
#include "lib/record.h"
#include "lib/xalloc.h"

/* What was reported of one edge: the kernel's cumulative sums. */
struct edge_state {
	uint64_t requests, req_bytes, resp_bytes;
	uint64_t buckets[HIST_BUCKETS];
	uint64_t proto_requests[TCP_PROTO_SLOTS];
	/* requests of connections decided after they closed, counted
	 * undecided by the kernel: they move at the next report */
	uint64_t moves[PROTO_NR];
	/* by outcome: the kernel's (a delta in a report's d), and those
	 * user space decided since the last report (tcp_topology__outcome) */
	struct outcome_counts outcomes, late;
	uint64_t seen; /* the report that last found the edge in the kernel */
	struct edge_missed *missed; /* NULL: none since the last report */
};

/* Requests the kernel finished on an edge it could not make
 * (tcp_topology__missed): counted here, added at the next report to the
 * edge the kernel made since (a later request's), else reported alone. */
struct edge_missed {
	uint64_t requests, req_bytes, resp_bytes;
	uint64_t proto_requests[TCP_PROTO_SLOTS];
	struct outcome_counts outcomes;
	struct hist latency;
	struct tcp_edge_miss last; /* the edge and its addresses */
};

struct tcp_topology {
	struct kmond *k;
	struct record *rec;
	int fd; /* the kernel's edges */
	int ncpus;
	struct tcp_edge_val *vals; /* one per possible CPU */
	struct hashmap *edges; /* hash of a tcp_edge -> struct edge_state * */
	uint64_t reports; /* so far, for edge_state.seen */
	struct proto_track *proto; /* the collector's, for this report */
	struct tcp_edge move_edge; /* the edge of the last move */
	struct edge_state *move_state; /* its state; NULL once freed */
};

static uint64_t edge_hash(const struct tcp_edge *e)
{
	return fnv1a(e, sizeof(*e));
}

static struct edge_state *edge_state(struct tcp_topology *t,
				     const struct tcp_edge *e)
{
	uint64_t h = edge_hash(e), *v = hashmap__find(t->edges, h);
	struct edge_state *s;

	if (v)
		return (struct edge_state *)(uintptr_t)*v;
	s = xcalloc(1, sizeof(*s));
	hashmap__set(t->edges, h, (uintptr_t)s);
	return s;
}

struct tcp_topology *tcp_topology__new(struct kmond *k, struct record *rec,
				       int edges_fd, int ncpus)
{
	struct tcp_topology *t = xcalloc(1, sizeof(*t));

	t->k = k;
	t->rec = rec;
	t->fd = edges_fd;
	t->ncpus = ncpus;
	t->vals = xcalloc(ncpus, sizeof(*t->vals));
	t->edges = hashmap__new();
	return t;
}

void tcp_topology__move(struct tcp_topology *t, const struct tcp_edge *e,
			int proto, uint64_t requests)
{
	/* most closes are on the edge of the one before */
	if (!t->move_state || memcmp(e, &t->move_edge, sizeof(*e))) {
		t->move_edge = *e;
		t->move_state = edge_state(t, e);
	}
	t->move_state->moves[proto] += requests;
}

void tcp_topology__outcome(struct tcp_topology *t, const struct tcp_edge *e,
			   const struct outcome *o)
{
	outcome_counts__add(&edge_state(t, e)->late, o);
}

/* The kernel tries again at the edge's next request (its pool refills
 * within milliseconds); user space only counts. */
void tcp_topology__missed(struct tcp_topology *t, const struct tcp_edge_miss *m)
{
	struct edge_state *s = edge_state(t, &m->e);
	struct edge_missed *d;

	if (!s->missed)
		s->missed = xcalloc(1, sizeof(*s->missed));
	d = s->missed;
	d->requests++;
	d->req_bytes += m->req_bytes;
	d->resp_bytes += m->resp_bytes;
	d->proto_requests[m->proto_slot % TCP_PROTO_SLOTS]++;
	outcome_counts__add(&d->outcomes,
			    &(struct outcome){ .known = m->outcome_known,
					       .error = m->outcome_error,
					       .status_class =
						       m->status_class });
	hist__add(&d->latency, m->latency_ns, 1);
	d->last = *m;
}

/* Sums the per-CPU values of one edge into *sum (buckets included). */
static int read_edge(struct tcp_topology *t, int fd, const struct tcp_edge *e,
		     struct tcp_edge_val *sum)
{
	if (bpf_map_lookup_elem(fd, e, t->vals))
		return -1;
	memset(sum, 0, sizeof(*sum));
	for (int cpu = 0; cpu < t->ncpus; cpu++) {
		const struct tcp_edge_val *v = &t->vals[cpu];

		sum->requests += v->requests;
		sum->req_bytes += v->req_bytes;
		sum->resp_bytes += v->resp_bytes;
		sum->outcomes += v->outcomes;
		sum->errors += v->errors;
		for (int c = 0; c < 5; c++)
			sum->status_class[c] += v->status_class[c];
		for (int p = 0; p < TCP_PROTO_SLOTS; p++)
			sum->proto_requests[p] += v->proto_requests[p];
		if (v->dst_family) {
			memcpy(sum->dst_addr, v->dst_addr, 16);
			sum->dst_family = v->dst_family;
		}
		if (v->src_family) {
			memcpy(sum->src_addr, v->src_addr, 16);
			sum->src_family = v->src_family;
		}
		for (uint32_t b = 0; b < HIST_BUCKETS; b++)
			sum->buckets[b] += v->buckets[b];
	}
	return 0;
}

/* The increase since *was, as a histogram; *was becomes now. */
static void edge_delta(struct edge_state *was, const struct tcp_edge_val *now,
		       struct hist *h)
{
	bool first = true;

	hist__reset(h);
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		uint64_t d = now->buckets[b] - was->buckets[b];

		was->buckets[b] = now->buckets[b];
		if (!d)
			continue;
		/* Bucket bounds stand for the exact extremes the kernel
		 * does not keep. */
		if (first)
			h->min = hist__bucket_low(b);
		first = false;
		h->max = hist__bucket_high(b);
		h->buckets[b] = d;
		h->count += d;
	}
}

/* The same requests' latencies, bucket by bucket (bio_hist's form): the
 * prometheus sink's histogram counts every request from these. */
static void emit_edge_hist(struct tcp_topology *t, uint64_t ts, const char *src,
			   const char *dst, const char *side,
			   const struct hist *h)
{
	record__begin(t->rec, "tcp_hist", ts, t->k->cfg.node);
	record__str(t->rec, "src", src);
	record__str(t->rec, "dst", dst);
	record__str(t->rec, "side", side);
	record__array_begin(t->rec, "buckets");
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		record__array_begin(t->rec, NULL);
		record__u64(t->rec, NULL, hist__bucket_low(b));
		record__u64(t->rec, NULL, h->buckets[b]);
		record__array_end(t->rec);
	}
	record__array_end(t->rec);
	record__end(t->rec);
	exporter__send(t->k->exporter, t->rec);
}

/* The protocol of most of the edge's requests this interval; those the
 * kernel finished undecided count for the server's usual protocol. */
static int edge_proto(struct tcp_topology *t, const struct tcp_edge *e,
		      const struct edge_state *d)
{
	uint64_t n[PROTO_NR];
	int best = PROTO_UNKNOWN;

	memcpy(n, d->proto_requests, sizeof(n));
	if (t->proto && d->proto_requests[TCP_PROTO_UNDECIDED])
		n[proto_track__server(t->proto, e->dst_pid, e->dst_svc)] +=
			d->proto_requests[TCP_PROTO_UNDECIDED];
	for (int p = 0; p < PROTO_NR; p++)
		if (n[p] > n[best])
			best = p;
	return best;
}

static void emit_edge(struct tcp_topology *t, uint64_t ts,
		      const struct tcp_edge *e, const struct tcp_edge_val *v,
		      const struct edge_state *d, const struct hist *h,
		      bool *gone)
{
	char src[CONFIG_NAME_MAX + 16], dst[CONFIG_NAME_MAX + 16];
	char addr[INET6_ADDRSTRLEN];
	bool src_gone = false;
	const char *side;
	int proto;

	if (e->side == TCP_SIDE_CLIENT) {
		*gone = false;
		tcp_names__addr(e->dst_family, e->dst_addr, dst, sizeof(dst));
	} else {
		tcp_names__node(t->k->provider, e->dst_pid, e->dst_svc, dst,
				sizeof(dst), gone);
	}
	if (e->src_svc || e->src_pid)
		tcp_names__node(t->k->provider, e->src_pid, e->src_svc, src,
				sizeof(src), &src_gone);
	else if (e->src_family == TCP_SRC_EXTERNAL)
		snprintf(src, sizeof(src), "external");
	else
		tcp_names__addr(e->src_family, e->src_addr, src, sizeof(src));
	*gone = *gone || src_gone;
	proto = edge_proto(t, e, d);
	side = e->side == TCP_SIDE_CLIENT ? "client" : "server";
	record__begin(t->rec, "topology", ts, t->k->cfg.node);
	record__str(t->rec, "src", src);
	record__str(t->rec, "dst", dst);
	record__str(t->rec, "side", side);
	/* Loopback addresses mean nothing to another node; a client-side
	 * dst is an address already. */
	if (e->side != TCP_SIDE_CLIENT && v->dst_family &&
	    !tcp_names__is_loopback(v->dst_family, v->dst_addr)) {
		tcp_names__addr(v->dst_family, v->dst_addr, addr, sizeof(addr));
		record__str(t->rec, "dst_addr", addr);
	}
	/* The client's own address, for kmon-topo to name it where the
	 * server's node knows it only by that address. */
	if (e->side == TCP_SIDE_CLIENT && v->src_family &&
	    !tcp_names__is_loopback(v->src_family, v->src_addr)) {
		tcp_names__addr(v->src_family, v->src_addr, addr, sizeof(addr));
		record__str(t->rec, "src_addr", addr);
	}
	record__u64(t->rec, "requests", d->requests);
	record__u64(t->rec, "bytes", d->req_bytes + d->resp_bytes);
	record__u64(t->rec, "req_bytes", d->req_bytes);
	record__u64(t->rec, "resp_bytes", d->resp_bytes);
	record__u64(t->rec, "latency_p50_ns", hist__percentile(h, 50));
	record__u64(t->rec, "latency_p95_ns", hist__percentile(h, 95));
	record__u64(t->rec, "latency_p99_ns", hist__percentile(h, 99));
	record__str(t->rec, "protocol", protocol__name(proto));
	outcome_counts__record(t->rec, &d->outcomes);
	record__end(t->rec);
	exporter__send(t->k->exporter, t->rec);
	emit_edge_hist(t, ts, src, dst, side, h);
}

/* Adds the requests the kernel could not count on the edge to what the
 * report says of it (before the undecided ones move). Of h, what is
 * reported is its buckets and extremes: its sum, which the kernel does
 * not keep, is only theirs. */
static void add_missed(struct edge_state *was, struct edge_state *d,
		       struct hist *h)
{
	struct edge_missed *m = was->missed;

	if (!m)
		return;
	d->requests += m->requests;
	d->req_bytes += m->req_bytes;
	d->resp_bytes += m->resp_bytes;
	for (int p = 0; p < TCP_PROTO_SLOTS; p++)
		d->proto_requests[p] += m->proto_requests[p];
	outcome_counts__sum(&d->outcomes, &m->outcomes);
	hist__merge(h, &m->latency);
	free(m);
	was->missed = NULL;
}

/* Adds the outcomes user space decided since the last report. */
static void add_late(struct edge_state *was, struct edge_state *d)
{
	outcome_counts__sum(&d->outcomes, &was->late);
	was->late = (struct outcome_counts){ 0 };
}

/* Moves requests the kernel counted undecided to the protocol found at
 * their connection's close (tcp_topology__move). */
static void apply_moves(struct edge_state *was, struct edge_state *d)
{
	for (int p = 0; p < PROTO_NR; p++) {
		uint64_t *undecided = &d->proto_requests[TCP_PROTO_UNDECIDED];
		uint64_t m = was->moves[p] < *undecided ? was->moves[p] :
							  *undecided;

		d->proto_requests[p] += m;
		*undecided -= m;
		was->moves[p] = 0; /* what found nothing to move is stale */
	}
}

/* Reports one edge; true when it can be forgotten (a process it names
 * exited, or it is idle while the map fills up). */
static bool report_edge(struct tcp_topology *t, uint64_t ts, int fd,
			const struct tcp_edge *e, size_t nkeys)
{
	/* 8 KiB each: kept off the stack (one collect at a time). */
	static struct tcp_edge_val now;
	static struct hist h;
	struct edge_state *was = edge_state(t, e), d;
	struct outcome_counts now_outcomes;
	bool gone = false;

	was->seen = t->reports;
	if (read_edge(t, fd, e, &now))
		return false;
	/* A deleted and remade edge starts again from zero. */
	if (now.requests < was->requests)
		*was = (struct edge_state){ .seen = t->reports,
					    .missed = was->missed,
					    .late = was->late };
	d.requests = now.requests - was->requests;
	d.req_bytes = now.req_bytes - was->req_bytes;
	d.resp_bytes = now.resp_bytes - was->resp_bytes;
	was->requests = now.requests;
	was->req_bytes = now.req_bytes;
	was->resp_bytes = now.resp_bytes;
	for (int p = 0; p < TCP_PROTO_SLOTS; p++) {
		d.proto_requests[p] =
			now.proto_requests[p] - was->proto_requests[p];
		was->proto_requests[p] = now.proto_requests[p];
	}
	now_outcomes = (struct outcome_counts){ .outcomes = now.outcomes,
						.errors = now.errors };
	memcpy(now_outcomes.status_class, now.status_class,
	       sizeof(now_outcomes.status_class));
	outcome_counts__delta(&d.outcomes, &was->outcomes, &now_outcomes);
	edge_delta(was, &now, &h);
	add_missed(was, &d, &h);
	add_late(was, &d);
	apply_moves(was, &d);
	/* outcomes decided late may come an interval after their requests */
	if (d.requests || d.outcomes.outcomes)
		emit_edge(t, ts, e, &now, &d, &h, &gone);
	return gone || (!d.requests && nkeys > TCP_MAX_EDGES / 4 * 3);
}

static void free_edge_state(void *v)
{
	struct edge_state *s = v;

	free(s->missed);
	free(s);
}

/* Frees the state kept of the edge whose hash is h. */
static void forget_state(struct tcp_topology *t, uint64_t h)
{
	uint64_t *v = hashmap__find(t->edges, h);

	if (v)
		free_edge_state((void *)(uintptr_t)*v);
	hashmap__delete(t->edges, h);
	t->move_state = NULL;
}

/* Reports the requests the kernel could not count on edges it still
 * lacks (report_edge took the others'), from what their misses said. */
static void report_missed_alone(struct tcp_topology *t, uint64_t ts)
{
	/* 8 KiB each: kept off the stack (one collect at a time). */
	static struct tcp_edge_val addrs;
	static struct hist h;
	uint64_t key, v;
	size_t pos = 0;

	while (hashmap__next(t->edges, &pos, &key, &v)) {
		struct edge_state *s = (struct edge_state *)(uintptr_t)v,
				  d = {};
		struct tcp_edge_miss m;
		bool gone;

		if (!s->missed)
			continue;
		m = s->missed->last;
		memcpy(addrs.dst_addr, m.dst_addr, 16);
		addrs.dst_family = m.dst_family;
		memcpy(addrs.src_addr, m.src_addr, 16);
		addrs.src_family = m.src_family;
		hist__reset(&h);
		add_missed(s, &d, &h);
		add_late(s, &d);
		apply_moves(s, &d);
		emit_edge(t, ts, &m.e, &addrs, &d, &h, &gone);
	}
}

/* Frees the states of edges the kernel does not have: those a move or a
 * miss made for an edge the kernel could not make, or has deleted since.
 * Else they would pile up for good. */
static void forget_unseen(struct tcp_topology *t)
{
	uint64_t h, v, *unseen = NULL;
	size_t pos = 0, n = 0;

	while (hashmap__next(t->edges, &pos, &h, &v)) {
		if (((struct edge_state *)(uintptr_t)v)->seen == t->reports)
			continue;
		unseen = xrealloc(unseen, (n + 1) * sizeof(*unseen));
		unseen[n++] = h;
	}
	for (size_t i = 0; i < n; i++)
		forget_state(t, unseen[i]);
	free(unseen);
}

/* One report's walk of the edges. */
struct topology_walk {
	struct tcp_topology *t;
	uint64_t ts;
	size_t nkeys;
};

/* Reports an edge; whether it goes (report_edge), its state with it. */
static bool collect_edge(void *ctx, const void *key, const void *value)
{
	struct topology_walk *w = ctx;

	(void)value;
	if (!report_edge(w->t, w->ts, w->t->fd, key, w->nkeys))
		return false;
	forget_state(w->t, edge_hash(key));
	return true;
}

void tcp_topology__report(struct tcp_topology *t, uint64_t ts,
			  struct proto_track *proto)
{
	struct topology_walk w = { t, ts, 0 };
	struct tcp_edge next;
	bool more;

	t->reports++;
	t->proto = proto;
	more = bpf_map_get_next_key(t->fd, NULL, &next) == 0;
	while (more) {
		w.nkeys++;
		more = bpf_map_get_next_key(t->fd, &next, &next) == 0;
	}
	map_sweep(t->fd, sizeof(struct tcp_edge), 0, collect_edge, &w, NULL);
	report_missed_alone(t, ts);
	forget_unseen(t);
}

void tcp_topology__free(struct tcp_topology *t)
{
	if (!t)
		return;
	hashmap__free_values(t->edges, free_edge_state);
	free(t->vals);
	free(t);
}
