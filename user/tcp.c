// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tcp collector: per-request latency on the server side (`tcp`
 * records) and the service graph (`topology` records).
 *
 * The kernel side follows each connection (bpf/tcp.bpf.c) and adds every
 * finished request to its edge: counts, bytes and a latency histogram per
 * CPU, cumulative. Each interval this side emits the increase of every
 * edge; requests the policy wants come one by one through the ringbuf.
 * It also keeps the kernel's listen list current from /proc/net/tcp{,6},
 * so connections older than kmond are known by their local port. */
#include <linux/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "exporter.h"
#include "hashmap.h"
#include "histogram.h"
#include "kmond.h"
#include "listen.h"
#include "loads.h"
#include "log.h"
#include "maps.h"
#include "occupancy.h"
#include "provider.h"
#include "record.h"
#include "tcp.h"
#include "tcp.skel.h"

enum { HOOK_RECV, HOOK_SEND, HOOK_STATE, NR_HOOKS };

/* What was reported of one edge: the kernel's cumulative sums. */
struct edge_state {
	uint64_t requests, req_bytes, resp_bytes;
	uint64_t buckets[HIST_BUCKETS];
};

struct tcp_collector {
	struct tcp_bpf *skel;
	struct kmond *k;
	struct hashmap *edges; /* hash of a tcp_edge -> struct edge_state * */
	struct tcp_edge_val *vals; /* one per possible CPU */
	int ncpus;
	uint32_t netns; /* kmond's: the one /proc/net/tcp describes */
	uint64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	struct tcp_loads *loads;
	struct occupancy *occ; /* the targets' response times */
	struct record rec;
};

static const struct hook tcp_hooks[] = {
	[HOOK_RECV] = { "sock_recv",
	  { { ATTACH_TP_BTF, "tcp_recv_btf", "sock_recv_length" },
	    { ATTACH_TRACEPOINT, "tcp_recv_tp", "sock/sock_recv_length" },
	    /* before 6.3: read, readv, recvfrom, recvmsg on a socket */
	    { ATTACH_RAW_TP, "tcp_recv_sys", "sys_exit" } },
	  3 },
	[HOOK_SEND] = { "sock_send",
	  { { ATTACH_TP_BTF, "tcp_send_btf", "sock_send_length" },
	    { ATTACH_TRACEPOINT, "tcp_send_tp", "sock/sock_send_length" },
	    /* write, writev, sendto, sendmsg, sendfile */
	    { ATTACH_RAW_TP, "tcp_send_sys", "sys_exit" } },
	  3 },
	[HOOK_STATE] = { "sock_state",
	  { { ATTACH_TP_BTF, "tcp_state_btf", "inet_sock_set_state" },
	    { ATTACH_TRACEPOINT, "tcp_state_tp",
	      "sock/inet_sock_set_state" } },
	  2 },
};

static bool tcp_enabled(const struct config *cfg)
{
	return cfg->tcp.enabled;
}

static bool tcp_required(const struct config *cfg)
{
	return cfg->tcp.required;
}

static int tcp_apply(void *state, const struct config *cfg)
{
	static const uint32_t policy[] = {
		[TCP_RECORDS_ALL] = TCP_REQUESTS_ALL,
		[TCP_RECORDS_NONE] = TCP_REQUESTS_NONE,
		[TCP_RECORDS_SLOW] = TCP_REQUESTS_SLOW,
		[TCP_RECORDS_SAMPLE] = TCP_REQUESTS_SAMPLE,
	};
	struct tcp_collector *c = state;
	struct tcp_ctl ctl = {
		.requests = policy[cfg->tcp.requests],
		.sample = cfg->tcp.sample,
		.slow_ns = cfg->tcp.slow_ns,
	};
	__u64 none = 0;
	__u32 zero = 0;

	if (occupancy__configure(c->occ, &cfg->tcp))
		return -ENOMEM;
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.sample_count), &zero,
			    &none, BPF_ANY);
	return bpf_map_update_elem(bpf_map__fd(c->skel->maps.tcp_ctl), &zero,
				   &ctl, BPF_ANY);
}

/* --- names --- */

/* IPv4 by hand: inet_ntop formats it with sprintf, a third of the cost
 * of a whole tcp record. */
static char *format_octet(char *p, unsigned int v)
{
	if (v >= 100)
		*p++ = '0' + v / 100;
	if (v >= 10)
		*p++ = '0' + v / 10 % 10;
	*p++ = '0' + v % 10;
	return p;
}

static void format_addr(int family, const __u8 *addr, char *buf, size_t len)
{
	char *p = buf;

	if (family == AF_INET6 || len < INET_ADDRSTRLEN) {
		if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr,
			       buf, len))
			snprintf(buf, len, "?");
		return;
	}
	for (int i = 0; i < 4; i++) {
		p = format_octet(p, addr[i]);
		*p++ = i < 3 ? '.' : '\0';
	}
}

static bool is_loopback(int family, const __u8 *addr)
{
	static const __u8 v6_loopback[16] = { [15] = 1 };

	if (family == AF_INET6)
		return memcmp(addr, v6_loopback, 16) == 0;
	return addr[0] == 127;
}

/* A topology node: the service, else the process name (every process
 * is monitored), else the pid. */
static void node_name(struct tcp_collector *c, uint32_t pid, uint32_t svc,
		      char *buf, size_t len, bool *gone)
{
	struct proc_name who;

	provider__name(c->k->provider, pid, svc, &who);
	*gone = svc == 0 && who.gone;
	if (who.service)
		snprintf(buf, len, "%s", who.service);
	else if (who.comm[0])
		snprintf(buf, len, "%s", who.comm);
	else
		snprintf(buf, len, "pid:%u", pid);
}

/* --- requests --- */

static uint64_t realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	return (rt.tv_sec - mono.tv_sec) * 1000000000ULL + rt.tv_nsec -
	       mono.tv_nsec;
}

static void add_tuple(struct record *r, const struct tcp_tuple *t)
{
	char buf[INET6_ADDRSTRLEN];

	record__str(r, "family", t->family == AF_INET6 ? "ipv6" : "ipv4");
	format_addr(t->family, t->laddr, buf, sizeof(buf));
	record__str(r, "laddr", buf);
	record__u64(r, "lport", t->lport);
	format_addr(t->family, t->raddr, buf, sizeof(buf));
	record__str(r, "raddr", buf);
	record__u64(r, "rport", t->rport);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct tcp_collector *c = ctx;
	const struct tcp_event *e = data;
	struct proc_name who;

	if (len < sizeof(*e))
		return 0;
	/* Events wait up to an interval: stamp them with their end. */
	record__begin(&c->rec, "tcp", e->end_ns + c->realtime_offset,
		      c->k->cfg.node);
	provider__name(c->k->provider, e->pid, e->svc, &who);
	record__process(&c->rec, e->pid, who.comm, who.service);
	record__u64(&c->rec, "tid", e->tid);
	add_tuple(&c->rec, &e->t);
	record__u64(&c->rec, "latency_ns", e->latency_ns);
	record__u64(&c->rec, "req_bytes", e->req_bytes);
	record__u64(&c->rec, "resp_bytes", e->resp_bytes);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
	return 0;
}

/* --- topology --- */

/* 64-bit FNV-1a: two edges colliding would merely share a state. */
static uint64_t edge_hash(const struct tcp_edge *e)
{
	const unsigned char *b = (const void *)e;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(*e); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Sums the per-CPU values of one edge into *sum (buckets included). */
static int read_edge(struct tcp_collector *c, int fd, const struct tcp_edge *e,
		     struct tcp_edge_val *sum)
{
	if (bpf_map_lookup_elem(fd, e, c->vals))
		return -1;
	memset(sum, 0, sizeof(*sum));
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		const struct tcp_edge_val *v = &c->vals[cpu];

		sum->requests += v->requests;
		sum->req_bytes += v->req_bytes;
		sum->resp_bytes += v->resp_bytes;
		if (v->dst_family) {
			memcpy(sum->dst_addr, v->dst_addr, 16);
			sum->dst_family = v->dst_family;
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

static void emit_edge(struct tcp_collector *c, uint64_t ts,
		      const struct tcp_edge *e, const struct tcp_edge_val *v,
		      const struct edge_state *d, const struct hist *h,
		      bool *gone)
{
	char src[CONFIG_NAME_MAX + 16], dst[CONFIG_NAME_MAX + 16];
	char addr[INET6_ADDRSTRLEN];
	bool src_gone = false;

	node_name(c, e->dst_pid, e->dst_svc, dst, sizeof(dst), gone);
	if (e->src_svc || e->src_pid)
		node_name(c, e->src_pid, e->src_svc, src, sizeof(src),
			  &src_gone);
	else
		format_addr(e->src_family, e->src_addr, src, sizeof(src));
	*gone = *gone || src_gone;
	record__begin(&c->rec, "topology", ts, c->k->cfg.node);
	record__str(&c->rec, "src", src);
	record__str(&c->rec, "dst", dst);
	record__str(&c->rec, "side", "server");
	/* Loopback addresses mean nothing to another node. */
	if (v->dst_family && !is_loopback(v->dst_family, v->dst_addr)) {
		format_addr(v->dst_family, v->dst_addr, addr, sizeof(addr));
		record__str(&c->rec, "dst_addr", addr);
	}
	record__u64(&c->rec, "requests", d->requests);
	record__u64(&c->rec, "bytes", d->req_bytes + d->resp_bytes);
	record__u64(&c->rec, "req_bytes", d->req_bytes);
	record__u64(&c->rec, "resp_bytes", d->resp_bytes);
	record__u64(&c->rec, "latency_p50_ns", hist__percentile(h, 50));
	record__u64(&c->rec, "latency_p95_ns", hist__percentile(h, 95));
	record__u64(&c->rec, "latency_p99_ns", hist__percentile(h, 99));
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

static struct edge_state *edge_state(struct tcp_collector *c,
				     const struct tcp_edge *e)
{
	uint64_t h = edge_hash(e), *v = hashmap__find(c->edges, h);
	struct edge_state *s;

	if (v)
		return (struct edge_state *)(uintptr_t)*v;
	s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	hashmap__set(c->edges, h, (uintptr_t)s);
	return s;
}

/* Reports one edge; true when it can be forgotten (a process it names
 * exited, or it is idle while the map fills up). */
static bool report_edge(struct tcp_collector *c, uint64_t ts, int fd,
			const struct tcp_edge *e, size_t nkeys)
{
	/* 8 KiB each: kept off the stack (one collect at a time). */
	static struct tcp_edge_val now;
	static struct hist h;
	struct edge_state *was = edge_state(c, e), d;
	bool gone = false;

	if (read_edge(c, fd, e, &now))
		return false;
	/* A deleted and remade edge starts again from zero. */
	if (now.requests < was->requests)
		memset(was, 0, sizeof(*was));
	d.requests = now.requests - was->requests;
	d.req_bytes = now.req_bytes - was->req_bytes;
	d.resp_bytes = now.resp_bytes - was->resp_bytes;
	was->requests = now.requests;
	was->req_bytes = now.req_bytes;
	was->resp_bytes = now.resp_bytes;
	edge_delta(was, &now, &h);
	if (d.requests)
		emit_edge(c, ts, e, &now, &d, &h, &gone);
	if (d.requests && e->dst_svc) {
		struct proc_name who;

		provider__name(c->k->provider, e->dst_pid, e->dst_svc, &who);
		occupancy__add(c->occ, who.service, &h);
	}
	return gone || (!d.requests && nkeys > TCP_MAX_EDGES / 4 * 3);
}

static void report_topology(struct tcp_collector *c, uint64_t ts)
{
	int fd = bpf_map__fd(c->skel->maps.edges);
	struct tcp_edge key, next, *gone = NULL;
	size_t ngone = 0, nkeys = 0;
	bool more;

	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		nkeys++;
		more = bpf_map_get_next_key(fd, &next, &next) == 0;
	}
	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (!report_edge(c, ts, fd, &key, nkeys))
			continue;
		gone = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (!gone)
			abort();
		gone[ngone++] = key;
	}
	for (size_t i = 0; i < ngone; i++) {
		uint64_t h = edge_hash(&gone[i]), *v = hashmap__find(c->edges, h);

		bpf_map_delete_elem(fd, &gone[i]);
		if (v)
			free((void *)(uintptr_t)*v);
		hashmap__delete(c->edges, h);
	}
	free(gone);
}

/* --- load --- */

static void report_loads(struct tcp_collector *c, uint64_t ts)
{
	struct tcp_load_maps m = {
		.loads = bpf_map__fd(c->skel->maps.loads),
		.max = bpf_map__fd(c->skel->maps.load_max),
		.epoch = bpf_map__fd(c->skel->maps.load_epoch),
	};

	tcp_loads__report(c->loads, &m, c->k, &c->rec, ts);
}

/* --- the listen list --- */

/* Adds the ports /proc/net/tcp{,6} lists and removes, in kmond's
 * namespace, those no longer listening (the kernel side adds listen()s
 * as they happen, but misses listeners older than kmond). */
static void refresh_listeners(struct tcp_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.listen_ports);
	struct tcp_listen_key key, next;
	struct hashmap *ports = hashmap__new();
	struct listener *ls;
	int n = listen__read(&ls);
	__u32 one = 1;
	bool more;

	if (n < 0) {
		log_warn("tcp: cannot read the listen list: %s", strerror(-n));
		hashmap__free(ports);
		return;
	}
	for (int i = 0; i < n; i++) {
		key = (struct tcp_listen_key){ c->netns, ls[i].port, 0 };
		hashmap__set(ports, ls[i].port, 1);
		bpf_map_update_elem(fd, &key, &one, BPF_ANY);
	}
	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (key.netns == c->netns && !hashmap__find(ports, key.port))
			bpf_map_delete_elem(fd, &key);
	}
	hashmap__free(ports);
	free(ls);
}

static void tcp_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct tcp_collector *c = state;

	(void)k; /* the daemon drained every ring before collecting */
	c->realtime_offset = realtime_offset();
	report_topology(c, ts);
	report_loads(c, ts);
	occupancy__report(c->occ, c->k, &c->rec, ts);
	refresh_listeners(c);
}

static void tcp_stats(void *state, struct collector_stats *st)
{
	struct tcp_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.tcp_stats);
	__u32 seen = TCP_REQUESTS_SEEN, rb = TCP_RB_LOST;
	__u32 conns = TCP_CONNS_FULL, edges = TCP_EDGES_FULL;
	__u32 loads = TCP_LOADS_FULL;

	st->events = map_percpu_sum(fd, &seen);
	/* A full ringbuf loses a record (topology still counts it); full
	 * maps lose connections or requests. */
	st->lost = map_percpu_sum(fd, &rb) + map_percpu_sum(fd, &conns) +
		   map_percpu_sum(fd, &edges) + map_percpu_sum(fd, &loads);
}

/* --- life cycle --- */

static void tcp_stop(void *state)
{
	struct tcp_collector *c = state;
	uint64_t h, v;
	size_t pos = 0;

	if (!c)
		return;
	tcp_bpf__destroy(c->skel);
	if (c->edges)
		while (hashmap__next(c->edges, &pos, &h, &v))
			free((void *)(uintptr_t)v);
	hashmap__free(c->edges);
	tcp_loads__free(c->loads);
	occupancy__free(c->occ);
	free(c->vals);
	record__free(&c->rec);
	free(c);
}

static int tcp_open(struct tcp_collector *c, struct kmond *k)
{
	int chosen[NR_HOOKS];
	int err;

	c->skel = tcp_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open tcp: %s", strerror(-err));
		return err;
	}
	err = probe__select(c->skel->obj, tcp_hooks, NR_HOOKS, chosen);
	if (err)
		return err;
	/* Every hook on tp_btf: state in the sockets (see tcp.bpf.c), and
	 * the hash they would have used is not needed. */
	c->skel->rodata->conn_in_socket = true;
	for (int h = 0; h < NR_HOOKS; h++)
		if (tcp_hooks[h].cands[chosen[h]].kind != ATTACH_TP_BTF)
			c->skel->rodata->conn_in_socket = false;
	if (c->skel->rodata->conn_in_socket)
		bpf_map__set_max_entries(c->skel->maps.conns, 1);
	log_debug("tcp: connection state in %s",
		  c->skel->rodata->conn_in_socket ? "the sockets" : "a hash");
	return provider__share_maps(k->provider, c->skel->obj);
}

static int tcp_start(struct kmond *k, void **state)
{
	struct tcp_collector *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->k = k;
	c->edges = hashmap__new();
	c->loads = tcp_loads__new();
	c->occ = occupancy__new();
	c->ncpus = map_ncpus();
	c->vals = calloc(c->ncpus, sizeof(*c->vals));
	c->netns = listen__netns();
	c->realtime_offset = realtime_offset();
	if (!c->vals || !c->loads || !c->occ) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = tcp_open(c, k);
	if (err)
		goto cleanup;
	err = tcp_bpf__load(c->skel);
	if (err) {
		log_error("failed to load tcp: %s", strerror(-err));
		goto cleanup;
	}
	err = tcp_apply(c, &k->cfg);
	err = err ?: kmond__add_ringbuf(k, bpf_map__fd(c->skel->maps.tcp_events),
					on_event, c);
	if (err)
		goto cleanup;
	/* Listeners first, so no connection older than kmond is taken for
	 * a client when its server reads. */
	refresh_listeners(c);
	err = tcp_bpf__attach(c->skel);
	if (err) {
		log_error("failed to attach tcp: %s", strerror(-err));
		goto cleanup;
	}
	*state = c;
	return 0;
cleanup:
	tcp_stop(c);
	return err;
}

const struct collector_ops tcp_collector = {
	.name = "tcp",
	.hooks = tcp_hooks,
	.nhooks = NR_HOOKS,
	.enabled = tcp_enabled,
	.required = tcp_required,
	.start = tcp_start,
	.apply = tcp_apply,
	.collect = tcp_collect,
	.stats = tcp_stats,
	.stop = tcp_stop,
};
