// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tcp collector: per-request latency on the server side and on the
 * client side (`tcp` records) and the service graph (`topology` records).
 *
 * The kernel side follows each connection (bpf/tcp/tcp.bpf.c) and adds every
 * finished request to its edge, whose increase tcp_topology.c reports
 * each interval; requests the policy wants come through the ringbuf, as
 * do those whose edge the kernel could not make.
 * It also keeps the kernel's listen list current from /proc/net/tcp{,6},
 * so connections older than kmond are known by their local port. */
#include <linux/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collectors/collector.h"
#include "exporters/exporter.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"
#include "collectors/tcp/links.h"
#include "collectors/tcp/loads.h"
#include "collectors/tcp/occupancy.h"
#include "loader/live_store.h"
#include "loader/misses.h"
#include "loader/prealloc.h"
#include "loader/rings.h"
#include "loader/uprobe_multi.h"
#include "loader/verified.h"
#include "provider/listen.h"
#include "collectors/tcp/tcp_flush.h"
#include "collectors/tcp/tcp_names.h"
#include "collectors/tcp/tcp_topology.h"
#include "bpf/tcp/outcome.h"
#include "collectors/tcp/request_outcome.h"
#include "collectors/tcp/routes.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "lib/protocol.h"
#include "collectors/tcp/proto_cgroups.h"
#include "collectors/tcp/proto_track.h"
#include "collectors/tcp/tls_attach.h"
#include "bpf/tcp/tcp.h"
#include "bpf/tcp/tls.h"
#include "tcp.skel.h"

/* One ring carries them all, told apart by their sizes (request events
 * come in batches: a multiple of one's size). */
_Static_assert(
	sizeof(struct proto_sample) % sizeof(struct tcp_event) != 0 &&
		sizeof(struct proto_close) % sizeof(struct tcp_event) != 0 &&
		sizeof(struct proto_close) != sizeof(struct proto_sample) &&
		sizeof(struct proto_hello) % sizeof(struct tcp_event) != 0 &&
		sizeof(struct proto_hello) != sizeof(struct proto_close),
	"protocol samples, closes and request events need different sizes");
_Static_assert(
	sizeof(struct tcp_edge_miss) % sizeof(struct tcp_event) != 0 &&
		sizeof(struct tcp_edge_miss) != sizeof(struct proto_sample) &&
		sizeof(struct tcp_edge_miss) != sizeof(struct proto_hello) &&
		sizeof(struct tcp_edge_miss) != sizeof(struct proto_close),
	"requests the kernel could not put on an edge need their own size");
_Static_assert(
	sizeof(struct tcp_outcome_late) % sizeof(struct tcp_event) != 0 &&
		sizeof(struct tcp_outcome_late) !=
			sizeof(struct proto_sample) &&
		sizeof(struct tcp_outcome_late) != sizeof(struct proto_hello) &&
		sizeof(struct tcp_outcome_late) != sizeof(struct proto_close) &&
		sizeof(struct tcp_outcome_late) != sizeof(struct tcp_edge_miss),
	"outcomes decided in user space need their own size");
_Static_assert(TCP_REQ_HEAD == OUTCOME_REQ_HEAD &&
		       TCP_RESP_HEAD == OUTCOME_RESP_HEAD,
	       "the kernel keeps the heads the rules read");

enum {
	HOOK_RECV,
	HOOK_SEND,
	HOOK_STATE,
	HOOK_SEND_ENTRY,
	HOOK_FORK,
	HOOK_FLUSH,
	HOOK_BATCHES,
	HOOK_PROTO_IN,
	HOOK_PROTO_OUT,
	HOOK_TLS,
	NR_HOOKS
};

struct tcp_collector {
	struct tcp_bpf *skel;
	struct kmond *k;
	struct tcp_topology *topo;
	int ncpus;
	uint32_t netns; /* kmond's: the one /proc/net/tcp describes */
	uint64_t listen_version; /* of the listen list listen_ports has */
	bool counts_listens; /* the provider reads listen_changes */
	uint64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	struct tcp_loads *loads;
	struct tcp_links_report *links;
	struct occupancy *occ; /* the targets' response times */
	struct record rec;
	struct proto_track *proto; /* NULL: protocols not identified */
	struct bpf_link *flush; /* finishes quiet connections' requests */
	struct proto_cgroups *cgroups; /* where the capture programs run */
	struct routes *routes; /* HTTP routes per service (outcomes) */
	struct tls_attach *tls; /* NULL: TLS not read in plaintext */
	uint32_t routes_max; /* collectors.tcp.routes it was made with */
};

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
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
	/* A client's call starts when it enters the send, and a server's
	 * response has left by the entry of its last send: the tracepoint
	 * (either state), else (before 6.3) the send syscall's entry with
	 * the state in the hash; else when the send returns. The
	 * tracepoint's program also reads protocol identification's sends
	 * (without it, the monitored cgroups' egress: bpf/tcp/proto.bpf.h). */
	[HOOK_SEND_ENTRY] = { "tcp_sendmsg",
	  { { ATTACH_TP_BTF, "tcp_send_entry_btf", "tcp_sendmsg_locked" },
	    { ATTACH_RAW_TP, "tcp_send_entry_sys", "sys_enter" } },
	  2, .optional = true,
	  .feature = "calls and responses are timed when their send "
		     "returns" },
	/* request paths: threads created to serve a request (spawn links);
	 * without it, only the thread that read a request links calls */
	[HOOK_FORK] = { "sched_fork",
	  { { ATTACH_TP_BTF, "tcp_fork_btf", "sched_process_fork" },
	    { ATTACH_TRACEPOINT, "tcp_fork_tp", "sched/sched_process_fork" } },
	  2, .optional = true,
	  .feature = "calls of threads made to serve a request are not "
		     "linked to it" },
	[HOOK_FLUSH] = TCP_FLUSH_HOOK,
	[HOOK_BATCHES] = { "batches",
	  { { ATTACH_RUN, "tcp_send_batches", "syscall" } },
	  1, .optional = true,
	  .feature = "request events go to the ring one by one" },
	/* protocol identification: what sockets receive, and what they
	 * send where tcp_sendmsg_locked is missing (bpf/tcp/proto.bpf.h) */
	[HOOK_PROTO_IN] = { "proto_in",
	  { { ATTACH_CGROUP, "proto_ingress", "cgroup_skb/ingress" } },
	  1, .optional = true,
	  .feature = "protocols are not identified" },
	[HOOK_PROTO_OUT] = { "proto_out",
	  { { ATTACH_CGROUP, "proto_egress", "cgroup_skb/egress" } },
	  1, .optional = true,
	  .feature = "protocols are not identified without tcp_sendmsg" },
	/* TLS in plaintext: uprobes on OpenSSL 3's SSL_read, SSL_write
	 * (and their _ex forms) and SSL_do_handshake, per monitored
	 * process (bpf/tcp/tls.bpf.h); its other programs follow this
	 * one's choice */
	[HOOK_TLS] = { "tls",
	  { { ATTACH_UPROBE_MULTI, "tls_write_entry", "SSL_write" },
	    { ATTACH_UPROBE, "tls_write_entry", "SSL_write" } },
	  2, .optional = true,
	  .feature = "TLS connections read as tls, not in plaintext" },
};
/* clang-format on */

/* The known nodes (collectors.tcp.nodes), rewritten whole: connections
 * already open keep the edge they were given. */
static void write_nodes(struct tcp_collector *c, const struct tcp_cfg *tc)
{
	int fd = bpf_map__fd(c->skel->maps.known_nodes);
	struct tcp_node_key key, next;
	__u32 one = 1;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0 &&
	       bpf_map_delete_elem(fd, &next) == 0)
		;
	for (uint32_t i = 0; i < tc->nnodes; i++) {
		memset(&key, 0, sizeof(key));
		key.prefixlen = 8 + tc->nodes[i].bits;
		key.data[0] = tc->nodes[i].family;
		memcpy(&key.data[1], tc->nodes[i].addr, 16);
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			log_warn("tcp: cannot add node %u: %s", i,
				 strerror(errno));
	}
}

/* Fills client_off with the services whose client side is off (any of
 * their entries says client: false); returns whether there are any. */
static __u32 apply_client_off(struct tcp_collector *c, const struct config *cfg)
{
	int fd = bpf_map__fd(c->skel->maps.client_off);
	__u32 key, next, one = 1, any = 0;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		bpf_map_delete_elem(fd, &key);
	}
	for (int i = 0; i < cfg->nservices; i++) {
		key = provider__service_id(c->k->provider,
					   cfg->services[i].name);
		if (!cfg->services[i].no_client || !key)
			continue;
		bpf_map_update_elem(fd, &key, &one, BPF_ANY);
		any = 1;
	}
	return any;
}

static struct occupancy_maps occupancy_maps(const struct tcp_collector *c)
{
	return (struct occupancy_maps){
		.targets = bpf_map__fd(c->skel->maps.load_targets),
		.data = bpf_map__fd(c->skel->maps.target_data),
		.steps_left = bpf_map__fd(c->skel->maps.target_steps_left),
	};
}

/* Outcomes read the first bytes where protocol identification's
 * programs see them, and need its verdicts: on with it. */
static void outcomes_apply(struct tcp_collector *c, const struct tcp_cfg *cfg)
{
	bool on = !cfg->no_outcomes && c->proto != NULL;

	/* a new bound starts the routes again */
	if (!c->routes || c->routes_max != cfg->routes) {
		routes__free(c->routes);
		c->routes = routes__new(cfg->routes);
		c->routes_max = cfg->routes;
	}
	live_store(c->skel->bss->outcomes_on, on);
	live_store(c->skel->bss->request_heads_on,
		   on && cfg->requests != TCP_RECORDS_NONE);
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
		.no_client = cfg->tcp.no_client,
		.some_no_client = apply_client_off(c, cfg),
		.no_load = cfg->tcp.no_load,
		.no_paths = cfg->tcp.no_paths,
	};
	__u64 none = 0;
	__u32 zero = 0;

	struct occupancy_maps occ = occupancy_maps(c);

	if (occupancy__configure(c->occ, &cfg->tcp, c->k->provider, &occ))
		return -ENOMEM;
	outcomes_apply(c, &cfg->tcp);
	/* a request looks up its target only while there are targets */
	live_store(c->skel->bss->targets_on, cfg->tcp.noccupancy > 0);
	for (__u32 side = TCP_SIDE_SERVER; side <= TCP_SIDE_CLIENT; side++)
		bpf_map_update_elem(bpf_map__fd(c->skel->maps.sample_count),
				    &side, &none, BPF_ANY);
	write_nodes(c, &cfg->tcp);
	return bpf_map_update_elem(bpf_map__fd(c->skel->maps.tcp_ctl), &zero,
				   &ctl, BPF_ANY);
}

/* --- requests --- */

static uint64_t realtime_offset(void)
{
	uint64_t mono = mono_ns();

	return clock_ns(CLOCK_REALTIME) - mono;
}

static void add_tuple(struct record *r, const struct tcp_tuple *t)
{
	record__str(r, "family", t->family == AF_INET6 ? "ipv6" : "ipv4");
	tcp_names__addr_field(r, "laddr", t->family, t->laddr);
	record__u64(r, "lport", t->lport);
	tcp_names__addr_field(r, "raddr", t->family, t->raddr);
	record__u64(r, "rport", t->rport);
}

/* Which end saw it, the sequence numbers that join it to the other
 * end's record, and on the client side whom it called. */
static void add_side(struct tcp_collector *c, const struct tcp_event *e)
{
	char dst[CONFIG_NAME_MAX + 16];
	bool gone;

	record__str(&c->rec, "side",
		    e->side == TCP_SIDE_CLIENT ? "client" : "server");
	record__u64(&c->rec, "req_seq", e->req_seq);
	record__u64(&c->rec, "resp_seq", e->resp_seq);
	if (e->side != TCP_SIDE_CLIENT)
		return;
	if (!e->dst_known) {
		tcp_names__addr_field(&c->rec, "dst", e->t.family, e->t.raddr);
		return;
	}
	tcp_names__node(c->k->provider, e->dst.pid, e->dst.svc, dst,
			sizeof(dst), &gone);
	record__str(&c->rec, "dst", dst);
}

/* A connection that closed before the kernel had its verdict: its
 * requests, counted undecided on its edge, move to its protocol. The
 * edge is the one the kernel's edge_of() chose. */
static void on_close(struct tcp_collector *c, const struct proto_close *s)
{
	struct tcp_edge e;
	int proto;

	proto = proto_track__close(c->proto, s);
	/* one it did not follow: its requests stay undecided (the server's
	 * protocol), not another connection's */
	if (proto < 0 || s->role != TCP_ROLE_SERVER || !s->requests)
		return;
	tcp_server_edge(&e, s->svc, s->pid, s->src_known ? &s->src : NULL,
			s->src_external, &s->t);
	tcp_topology__move(c->topo, &e, proto, s->requests);
}

/* The kernel's verdict, else ours (it finished before the kernel got
 * the verdict). */
static int conn_proto(struct tcp_collector *c, __u32 proto, __u64 cookie)
{
	if (proto < PROTO_NR)
		return proto;
	return c->proto ? proto_track__conn(c->proto, cookie) : PROTO_UNKNOWN;
}

static size_t head_len(__u16 len, size_t size)
{
	return len < size ? len : size;
}

/* status, error, method, route: what the request's heads say, by the
 * connection's protocol (docs/design/outcomes.md). */
static void add_outcome(struct tcp_collector *c, const struct tcp_event *e,
			int proto)
{
	struct request_outcome o;
	char route[REQUEST_PATH_MAX];

	if (!e->resp_head.len && !e->req_head.len)
		return;
	request_outcome__decode(&o, proto, e->side, e->req_head.data,
				head_len(e->req_head.len, TCP_REQ_HEAD),
				e->req_bytes, e->resp_head.data,
				head_len(e->resp_head.len, TCP_RESP_HEAD),
				e->resp_bytes, e->grpc);
	if (o.has_status && o.status_is_str)
		record__str(&c->rec, "status", o.status_str);
	else if (o.has_status)
		record__i64(&c->rec, "status", o.status_num);
	if (o.known)
		record__bool(&c->rec, "error", o.error);
	if (o.has_grpc)
		record__i64(&c->rec, "grpc_status", o.grpc_status);
	if (o.has_method)
		record__str(&c->rec, "method", o.method);
	if (o.has_path && c->routes) {
		routes__fold(c->routes, e->svc, o.path, route, sizeof(route));
		record__str(&c->rec, "route", route);
	}
}

static void on_request(struct tcp_collector *c, const struct tcp_event *e)
{
	bool plain = e->cookie & PROTO_TLS_COOKIE;
	struct proc_name who;
	const char *sni;
	int proto;

	/* Events wait up to an interval: stamp them with their end. */
	record__begin(&c->rec, "tcp", e->end_ns + c->realtime_offset,
		      c->k->cfg.node);
	provider__name(c->k->provider, e->pid, e->svc, &who);
	provider__record(&c->rec, e->pid, &who);
	record__u64(&c->rec, "tid", e->tid);
	add_tuple(&c->rec, &e->t);
	record__u64(&c->rec, "latency_ns", e->latency_ns);
	record__u64(&c->rec, "req_bytes", e->req_bytes);
	record__u64(&c->rec, "resp_bytes", e->resp_bytes);
	add_side(c, e);
	tcp_links__fields(&c->rec, e->id, e->parent, e->link);
	proto = conn_proto(c, e->proto, e->cookie);
	record__str(&c->rec, "protocol", protocol__name(proto));
	/* read in plaintext: the name is its ciphertext's */
	if (plain)
		record__bool(&c->rec, "tls", true);
	if ((proto == PROTO_TLS || plain) &&
	    (sni = proto_track__sni(c->proto, e->cookie & ~PROTO_TLS_COOKIE)))
		record__str(&c->rec, "tls_sni", sni);
	add_outcome(c, e, proto);
	record__end(&c->rec);
	exporter__send(c->k->exporter, &c->rec);
}

/* A request the kernel finished undecided (or gRPC's), with its
 * response's first bytes: its outcome by the verdict, as its record has
 * it (both are looked up at the same place in the ring). */
static void on_outcome_late(struct tcp_collector *c,
			    const struct tcp_outcome_late *l)
{
	int proto = conn_proto(c, l->proto, l->cookie);
	struct outcome o;

	request_outcome__classify(&o, proto, l->side, l->resp_head.data,
				  head_len(l->resp_head.len, OUTCOME_RESP_HEAD),
				  l->stream, l->grpc);
	/* a status without an outcome counts in its class (gRPC's 200) */
	if (l->on_edge && (o.known || o.status_class))
		tcp_topology__outcome(c->topo, &l->e, &o);
	if (l->load_slot && o.known)
		tcp_loads__outcome(c->loads, l->load_slot - 1, o.error);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct tcp_collector *c = ctx;
	const struct tcp_event *e = data;

	/* a hello is a sample with more bytes (caplen says how many) */
	if (len == sizeof(struct proto_sample) ||
	    len == sizeof(struct proto_hello)) {
		if (c->proto)
			proto_track__sample(c->proto, data);
		return 0;
	}
	if (len == sizeof(struct proto_close)) {
		if (c->proto)
			on_close(c, data);
		return 0;
	}
	if (len == sizeof(struct tcp_edge_miss)) {
		tcp_topology__missed(c->topo, data);
		return 0;
	}
	if (len == sizeof(struct tcp_outcome_late)) {
		on_outcome_late(c, data);
		return 0;
	}
	/* one request, or a batch of them (bpf/tcp/tcp_batch.bpf.h) */
	for (; len >= sizeof(*e); len -= sizeof(*e))
		on_request(c, e++);
	return 0;
}

/* Sends what the kernel's batches of request events hold into the ring
 * (before it is read for a report). A batch taken at that moment by a
 * program of ours on its CPU is tried again a few times; else it goes at
 * the next report. */
static void send_batches(struct tcp_collector *c)
{
	int fd = bpf_program__fd(c->skel->progs.tcp_send_batches);
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (!c->skel->rodata->batch_events)
		return;
	for (int i = 0; i < 100; i++) {
		if (bpf_prog_test_run_opts(fd, &opts)) {
			log_warn("tcp: request events not sent: %s",
				 strerror(errno));
			return;
		}
		if (!opts.retval)
			return;
		usleep(100);
	}
	log_debug("tcp: %u batches of request events wait for the next report",
		  opts.retval);
}

/* --- load --- */

static void load_maps(struct tcp_collector *c, struct tcp_load_maps *m)
{
	m->loads = bpf_map__fd(c->skel->maps.loads);
	m->slots = bpf_map__fd(c->skel->maps.load_slots);
	m->free = bpf_map__fd(c->skel->maps.load_free);
	m->epoch = bpf_map__fd(c->skel->maps.load_epoch);
}

static void report_loads(struct tcp_collector *c)
{
	struct tcp_load_maps m;

	load_maps(c, &m);
	tcp_loads__report(c->loads, &m, c->k, &c->rec, c->realtime_offset);
}

/* --- the listen list --- */

/* Adds the ports the listen list has (every network namespace) and
 * removes, in the namespaces it read, those no longer listening (the
 * kernel side adds listen()s as they happen, but misses listeners older
 * than kmond). */
static void refresh_listeners(struct tcp_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.listen_ports);
	struct tcp_listen_key key, next;
	struct hashmap *ports, *netns;
	const struct listener *ls;
	uint64_t version;
	int n = provider__listeners(c->k->provider, &ls, &version);
	__u32 on = TCP_LISTEN_ON;
	bool more;

	if (n < 0) {
		log_warn("tcp: cannot read the listen list: %s", strerror(-n));
		return;
	}
	if (version == c->listen_version)
		return; /* not read again: nothing changed */
	c->listen_version = version;
	ports = hashmap__new();
	netns = hashmap__new();
	hashmap__set(netns, c->netns, 1);
	for (int i = 0; i < n; i++) {
		key = (struct tcp_listen_key){ ls[i].netns, ls[i].port, 0 };
		hashmap__set(ports, (uint64_t)ls[i].netns << 16 | ls[i].port,
			     1);
		hashmap__set(netns, ls[i].netns, 1);
		/* one the kernel knows keeps what it knows of its owner */
		bpf_map_update_elem(fd, &key, &on, BPF_NOEXIST);
	}
	more = bpf_map_get_next_key(fd, NULL, &next) == 0;
	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (hashmap__find(netns, key.netns) &&
		    !hashmap__find(ports, (uint64_t)key.netns << 16 | key.port))
			bpf_map_delete_elem(fd, &key);
	}
	hashmap__free(ports);
	hashmap__free(netns);
}

static void tcp_collect(void *state, struct kmond *k, uint64_t ts)
{
	struct tcp_collector *c = state;
	struct occupancy_maps occ;

	c->realtime_offset = realtime_offset();
	/* Requests answered an interval ago on connections quiet since:
	 * finished now, so they are in this report. */
	tcp_flush__run(c->flush, c->skel, k->cfg.interval_ns);
	send_batches(c);
	rings__consume(k->rings);
	tcp_topology__report(c->topo, ts, c->proto);
	report_loads(c);
	occ = occupancy_maps(c);
	occupancy__report(c->occ, &occ, c->k, &c->rec, ts);
	if (c->proto)
		proto_track__collect(c->proto, ts);
	if (c->cgroups)
		proto_cgroups__sync(c->cgroups, k->provider, !k->cfg.nservices);
	if (c->tls)
		tls_attach__sync(c->tls, k->provider);
	refresh_listeners(c);
}

/* The kernel's causes of lost events, each a field of collectors.tcp in
 * stats: a full ringbuf loses a record (topology still counts it), a
 * protocol sample or an occupancy target's step (their fits then go
 * without the sequence); full maps lose connections, requests or their
 * loads. */
static const struct {
	const char *field;
	__u32 stat;
} lost_causes[] = {
	{ "records_lost", TCP_RB_LOST },  { "conns_full", TCP_CONNS_FULL },
	{ "edges_full", TCP_EDGES_FULL }, { "samples_lost", TCP_PROTO_LOST },
	{ "loads_full", TCP_LOADS_FULL }, { "steps_lost", TCP_STEPS_LOST },
};

static void tcp_stats(void *state, struct collector_stats *st)
{
	struct tcp_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.tcp_stats);
	__u32 seen = TCP_REQUESTS_SEEN;
	size_t i;

	st->events = map_percpu_sum(fd, &seen);
	st->lost = 0;
	for (i = 0; i < ARRAY_SIZE(lost_causes); i++)
		st->lost += map_percpu_sum(fd, &lost_causes[i].stat);
	if (c->proto) /* samples of connections it had no room to follow */
		st->lost += proto_track__dropped(c->proto);
	/* a load's interval not reported (its sums not whole) */
	st->lost += tcp_loads__broken(c->loads);
	st->missed = misses__count(c->skel->obj);
	st->lost += st->missed;
}

/* Calls with and without a parent, and accepted sockets given state
 * that no monitored process read, in collectors.tcp of stats. */
static void tcp_stats_record(void *state, struct record *r)
{
	struct tcp_collector *c = state;
	int fd = bpf_map__fd(c->skel->maps.tcp_stats);
	__u32 unmonitored = TCP_ACCEPTED_UNMONITORED;
	size_t i;

	tcp_links__stats(c->links, bpf_map__fd(c->skel->maps.links),
			 c->k->provider, r);
	record__u64(r, "accepted_unmonitored",
		    map_percpu_sum(fd, &unmonitored));
	/* Of lost, each cause (with missed, they add up to it): which one
	 * tells an operator what to enlarge or what went short. */
	for (i = 0; i < ARRAY_SIZE(lost_causes); i++)
		record__u64(r, lost_causes[i].field,
			    map_percpu_sum(fd, &lost_causes[i].stat));
	record__u64(r, "samples_untracked",
		    c->proto ? proto_track__dropped(c->proto) : 0);
	/* loads whose sums were not whole, forgotten unreported */
	record__u64(r, "loads_broken", tcp_loads__broken(c->loads));
	if (c->cgroups) {
		record__u64(r, "protocol_cgroups",
			    proto_cgroups__attached(c->cgroups));
		record__u64(r, "protocol_cgroup_failures",
			    proto_cgroups__failures(c->cgroups));
	}
	if (c->tls) {
		struct tls_attach_stats tls;

		tls_attach__stats(c->tls, &tls);
		record__u64(r, "tls_processes", tls.procs);
		record__u64(r, "tls_attach_failures", tls.failures);
		record__u64(r, "tls_attached_at_start", tls.at_start);
		record__u64(r, "tls_attach_delay_max_ns", tls.delay_max_ns);
		record__u64(r, "tls_gone_unattached", tls.gone_first);
	}
}

/* --- life cycle --- */

static void tcp_stop(void *state)
{
	struct tcp_collector *c = state;

	if (!c)
		return;
	if (c->counts_listens)
		provider__count_listens(c->k->provider, NULL);
	if (c->cgroups)
		provider__watch_selection(c->k->provider, NULL, NULL);
	if (c->tls)
		provider__watch_lifecycle(c->k->provider, NULL, NULL);
	tls_attach__free(c->tls); /* before the programs it attached */
	proto_cgroups__free(c->cgroups);
	bpf_link__destroy(c->flush);
	tcp_bpf__destroy(c->skel);
	proto_track__free(c->proto);
	tcp_topology__free(c->topo);
	tcp_loads__free(c->loads);
	tcp_links__free(c->links);
	routes__free(c->routes);
	occupancy__free(c->occ);
	record__free(&c->rec);
	free(c);
}

/* --- protocol identification --- */

/* It reads the connection state in the sockets: only with every hook on
 * tp_btf (see tcp.bpf.c). */
static void proto_open(struct tcp_collector *c, const int *chosen, bool all_btf,
		       bool send_hook)
{
	bool on = all_btf && c->k->cfg.tcp.protocols &&
		  chosen[HOOK_PROTO_IN] >= 0;
	const char *why = NULL;
	/* sends: at the send call, else every egress segment */
	bool at_send = on && send_hook;

	on = on && (at_send || chosen[HOOK_PROTO_OUT] >= 0);
	at_send = at_send && on;
	c->skel->rodata->proto_capture = on;
	bpf_program__set_autoload(c->skel->progs.proto_ingress, on);
	c->skel->rodata->capture_sends = at_send;
	bpf_program__set_autoload(c->skel->progs.proto_egress, on && !at_send);
	if (!c->k->cfg.tcp.protocols)
		why = "collectors.tcp.protocols is false";
	else if (!all_btf)
		why = "it needs every tcp hook on tp_btf";
	if (why)
		log_info("tcp: protocol identification off (%s)", why);
	probe__set_unloaded(&tcp_hooks[HOOK_PROTO_IN], why);
	if (!why && at_send)
		why = "tcp_sendmsg_locked reads the sends";
	probe__set_unloaded(&tcp_hooks[HOOK_PROTO_OUT], why);
}

/* A process joined a service: the capture programs go to its cgroup,
 * the TLS uprobes to its libssl. */
static void on_selected(void *ctx, uint32_t pid)
{
	struct tcp_collector *c = ctx;

	proto_cgroups__add_pid(c->cgroups, pid);
	if (c->tls)
		tls_attach__pid(c->tls, pid);
}

/* The capture programs in the cgroups of the monitored processes
 * (proto_cgroups.h). Without a cgroup v2 hierarchy the collector runs on,
 * every protocol unknown. */
static void proto_attach(struct tcp_collector *c)
{
	struct bpf_program *egress = c->skel->progs.proto_egress;

	if (!c->skel->rodata->proto_capture)
		return;
	/* sends at the tracepoint came with tcp_bpf__attach */
	c->cgroups = proto_cgroups__new(
		c->skel->progs.proto_ingress,
		c->skel->rodata->capture_sends ? NULL : egress);
	if (!c->cgroups) {
		log_warn("tcp: protocol identification off: no cgroup v2 "
			 "hierarchy");
		live_store(c->skel->bss->sends_uncaptured, true);
		return;
	}
	c->proto = proto_track__new(c->k,
				    bpf_map__fd(c->skel->maps.proto_verdicts),
				    &c->skel->bss->proto_verdict_gen);
	if (!c->proto) {
		log_warn("tcp: protocol identification off: out of memory");
		proto_cgroups__free(c->cgroups);
		c->cgroups = NULL;
		return;
	}
	provider__watch_selection(c->k->provider, on_selected, c);
	proto_cgroups__sync(c->cgroups, c->k->provider, !c->k->cfg.nservices);
}

/* --- TLS in plaintext (bpf/tcp/tls.bpf.h) --- */

/* Its programs follow the hook's choice; it needs protocol
 * identification (its plaintext is identified as a connection of its
 * own) and collectors.tcp.tls. */
static void tls_open(struct tcp_collector *c, const int *chosen)
{
	struct tcp_bpf *s = c->skel;
	bool on = chosen[HOOK_TLS] >= 0 && c->k->cfg.tcp.tls &&
		  s->rodata->proto_capture && s->rodata->capture_sends;
	struct bpf_program *progs[] = {
		s->progs.tls_write_entry,     s->progs.tls_write_ex_entry,
		s->progs.tls_read_entry,      s->progs.tls_read_ex_entry,
		s->progs.tls_handshake_entry, s->progs.tls_exit_ret,
	};
	const char *why = NULL;

	bool multi = chosen[HOOK_TLS] >= 0 &&
		     tcp_hooks[HOOK_TLS].cands[chosen[HOOK_TLS]].kind ==
			     ATTACH_UPROBE_MULTI;

	/* both candidates are the same programs: loaded for the chosen */
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		bpf_program__set_autoload(progs[i], on);
		if (multi)
			bpf_program__set_expected_attach_type(
				progs[i], KMON_TRACE_UPROBE_MULTI);
	}
	s->rodata->tls_on = on;
	if (chosen[HOOK_TLS] < 0)
		return;
	if (!c->k->cfg.tcp.tls)
		why = "collectors.tcp.tls is false";
	else if (!on)
		why = "it needs protocol identification with tcp_sendmsg";
	if (why)
		log_info("tcp: TLS not read in plaintext (%s)", why);
	probe__set_unloaded(&tcp_hooks[HOOK_TLS], why);
}

static void on_lifecycle(void *ctx, const struct proc_lifecycle *change)
{
	struct tcp_collector *c = ctx;

	tls_attach__change(c->tls, change);
}

/* After proto_attach: the plaintext is identified. */
static void tls_start(struct tcp_collector *c)
{
	struct tcp_bpf *s = c->skel;
	struct tls_progs progs = {
		.write = s->progs.tls_write_entry,
		.write_ex = s->progs.tls_write_ex_entry,
		.read = s->progs.tls_read_entry,
		.read_ex = s->progs.tls_read_ex_entry,
		.handshake = s->progs.tls_handshake_entry,
		.exit = s->progs.tls_exit_ret,
		.multi = bpf_program__expected_attach_type(
				 s->progs.tls_exit_ret) ==
			 (enum bpf_attach_type)KMON_TRACE_UPROBE_MULTI,
	};

	if (!bpf_program__autoload(s->progs.tls_write_entry) || !c->proto)
		return;
	c->tls = tls_attach__new(&progs, &s->bss->tls_procs);
	provider__watch_lifecycle(c->k->provider, on_lifecycle, c);
	tls_attach__sync(c->tls, c->k->provider);
}

/* The send-entry hooks run on every TCP send (the syscall one on every
 * syscall) of the host. They stamp the sends of the sockets we follow
 * (tcp_sendmsg_locked reads either state, the syscall one only the hash:
 * its socket is a plain address), not when the client side is off at
 * start (a reload that turns it on then stamps calls when their send
 * returns, and responses end so); tcp_sendmsg_locked's program also
 * captures protocol identification's sends (after proto_open). Neither
 * is loaded with nothing to do. */
static void send_entry_select(struct tcp_collector *c, struct kmond *k,
			      int chosen)
{
	const struct hook *hook = &tcp_hooks[HOOK_SEND_ENTRY];
	const char *why = NULL;

	if (chosen < 0)
		return;
	if (k->cfg.tcp.no_client)
		why = "collectors.tcp.client is false";
	c->skel->rodata->stamp_sends = !why;
	/* the syscall's entry reaches no socket's storage: it leaves its
	 * time for the send's return, per thread */
	c->skel->rodata->sends_stashed =
		!why && hook->cands[chosen].kind == ATTACH_RAW_TP &&
		c->skel->rodata->conn_in_socket;
	if (why)
		log_debug("tcp: sends not stamped at their entry (%s): "
			  "stamped when they return",
			  why);
	if (c->skel->rodata->capture_sends)
		why = NULL;
	if (why)
		bpf_program__set_autoload(bpf_object__find_program_by_name(
						  c->skel->obj,
						  hook->cands[chosen].prog),
					  false);
	probe__set_unloaded(hook, why);
}

/* Request events in batches (bpf/tcp/tcp_batch.bpf.h) where the kernel can
 * run the program that sends them on user space's behalf. */
static void batches_open(struct tcp_collector *c, int chosen)
{
	bool can = chosen >= 0 &&
		   libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) >
			   0 &&
		   libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL,
					   BPF_FUNC_map_lookup_percpu_elem,
					   NULL) > 0 &&
		   libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_loop,
					   NULL) > 0;

	c->skel->rodata->batch_events = can;
	c->skel->rodata->batch_cpus = c->ncpus;
	bpf_program__set_autoload(c->skel->progs.tcp_send_batches, can);
	if (!can)
		log_debug("tcp: request events one record each (no syscall "
			  "programs here)");
}

static int tcp_open(struct tcp_collector *c, struct kmond *k)
{
	int chosen[NR_HOOKS];
	bool send_btf, all_btf = true;
	int err;

	c->skel = tcp_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("failed to open tcp: %s", strerror(-err));
		return err;
	}
	err = probe__select("tcp", c->skel->obj, tcp_hooks, NR_HOOKS, chosen);
	if (err)
		return err;
	/* Every hook on tp_btf: state in the sockets (see tcp.bpf.c), and
	 * the hash they would have used is not needed; unless the kernel
	 * allows no iterator to flush them (tcp_flush.h). */
	for (int h = 0; h < HOOK_SEND_ENTRY; h++)
		if (tcp_hooks[h].cands[chosen[h]].kind != ATTACH_TP_BTF)
			all_btf = false;
	c->skel->rodata->conn_in_socket = tcp_flush__select(
		c->skel, &tcp_hooks[HOOK_FLUSH], &chosen[HOOK_FLUSH], all_btf);
	if (c->skel->rodata->conn_in_socket)
		bpf_map__set_max_entries(c->skel->maps.conns, 1);
	c->skel->rodata->id_prefix = tcp_links__prefix(k->cfg.node);
	/* the program puts bpf_get_smp_processor_id() in these bits: CPU
	 * numbers, which may have gaps, not the count of CPUs */
	c->skel->rodata->id_cpu_bits = tcp_links__cpu_bits(map_cpu_id_bound());
	send_btf =
		chosen[HOOK_SEND_ENTRY] >= 0 &&
		tcp_hooks[HOOK_SEND_ENTRY].cands[chosen[HOOK_SEND_ENTRY]].kind ==
			ATTACH_TP_BTF;
	log_debug("tcp: connection state in %s",
		  c->skel->rodata->conn_in_socket ? "the sockets" : "a hash");
	/* Some hook is not tp_btf: its programs need preallocated maps. */
	if (!all_btf)
		err = prealloc__map(c->skel->maps.edges, PREALLOC_BUDGET);
	proto_open(c, chosen, all_btf, send_btf);
	send_entry_select(c, k, chosen[HOOK_SEND_ENTRY]);
	tls_open(c, chosen);
	batches_open(c, chosen[HOOK_BATCHES]);
	return err ?: provider__share_maps(k->provider, c->skel->obj);
}

static int tcp_start(struct kmond *k, void **state)
{
	struct tcp_collector *c = xcalloc(1, sizeof(*c));
	struct tcp_load_maps m;
	int err;

	c->k = k;
	c->loads = tcp_loads__new();
	c->links = tcp_links__new(map_ncpus());
	c->occ = occupancy__new();
	c->ncpus = map_ncpus();
	c->netns = listen__netns();
	c->realtime_offset = realtime_offset();
	err = tcp_open(c, k);
	if (err)
		goto cleanup;
	err = tcp_bpf__load(c->skel);
	if (err) {
		log_debug("failed to load tcp: %s", strerror(-err));
		goto cleanup;
	}
	verified__log("tcp", c->skel->obj);
	c->topo = tcp_topology__new(k, &c->rec,
				    bpf_map__fd(c->skel->maps.edges), c->ncpus);
	load_maps(c, &m);
	err = tcp_loads__init(&m);
	if (err) {
		log_error("tcp: cannot fill the free load slots: %s",
			  strerror(-err));
		goto cleanup;
	}
	err = tcp_apply(c, &k->cfg);
	if (!err)
		err = rings__add(k->rings,
				 bpf_map__fd(c->skel->maps.tcp_events),
				 on_event, c);
	if (!err)
		err = rings__add(k->rings,
				 bpf_map__fd(c->skel->maps.load_steps),
				 occupancy__step, c->occ);
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
	/* From now on the state hook counts listen()s and listener closes:
	 * the listen list is read again only when they move (it is read
	 * once more now, for those since the read above). */
	provider__count_listens(
		k->provider,
		(const volatile uint64_t *)&c->skel->bss->listen_changes);
	c->counts_listens = true;
	proto_attach(c);
	tls_start(c);
	outcomes_apply(c, &k->cfg.tcp);
	err = tcp_flush__attach(c->skel, &c->flush);
	if (err)
		goto cleanup;
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
	.cfg_offset = offsetof(struct config, tcp),
	.start = tcp_start,
	.apply = tcp_apply,
	.collect = tcp_collect,
	.stats = tcp_stats,
	.stats_record = tcp_stats_record,
	.stop = tcp_stop,
};
