// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Protocol identification in user space (see proto_track.h).
 *
 * Samples come through the tcp collector's ring, before the request
 * events of their connection, so a request the kernel finished before
 * its verdict arrived still finds it here. A verdict goes to the kernel
 * once the connection's owner is known (a server that speaks first sends
 * its greeting before kmond learns whose socket it is): the connection's
 * vote must name its endpoint. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <bpf/bpf.h>

#include "exporters/exporter.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "collectors/collector.h"
#include "lib/log.h"
#include "lib/protocol.h"
#include "collectors/tcp/proto_track.h"
#include "provider/provider.h"
#include "lib/record.h"

/* Connections followed at once; more are left undecided (counted). */
#define MAX_CONNS 65536
/* An undecided connection this quiet is decided on what it sent. */
#define IDLE_NS (10ULL * 1000000000)
#define RECENTLY_CLOSED 1024
/* Endpoints are reported this often while they have connections. */
#define ENDPOINT_EVERY_NS (60ULL * 1000000000)
/* TLS connections whose server name is kept for their tcp records (see
 * struct sni_slot) */
#define SNI_SLOTS 2048

struct msg {
	uint64_t ts;
	bool from_server;
	bool hello; /* its bytes are the connection's hello */
	uint32_t len;
	uint16_t caplen;
	uint8_t data[PROTO_SAMPLE_BYTES];
};

struct conn {
	uint64_t cookie, last_ns;
	struct tcp_tuple t;
	uint32_t pid, svc;
	bool client; /* the monitored end is the client */
	bool decided; /* proto final */
	bool told; /* the kernel has the verdict */
	bool closed;
	bool counted; /* voted for its endpoint */
	bool idle; /* quiet too long: decided on what it sent */
	uint8_t sweeps; /* sweeps since it was closed or told */
	int proto;
	int nmsgs, ndir[2];
	char *sni; /* a TLS server name, when one was seen */
	uint8_t *hello; /* a TLS ClientHello's longer capture */
	/* last: only the first nmsgs are ever read, and a new connection
	 * clears the fields above alone */
	struct msg msgs[2 * PROTO_MAX_SEGS];
};

struct endpoint {
	uint32_t pid, svc;
	struct tcp_tuple t; /* laddr, lport, family: the rest zero */
	uint64_t votes[PROTO_NR];
	uint64_t connections;
	uint64_t new_votes; /* since the last report */
	uint64_t last_report; /* realtime ns */
	int reported; /* the protocol last reported, -1: none */
	char sni[PROTOCOL_SNI_MAX];
};

/* The server name of a TLS connection, kept after the connection is
 * forgotten here (its requests go on). Direct-mapped by cookie: with more
 * TLS connections at once, an older one's name is overwritten and its
 * records go without. */
struct sni_slot {
	uint64_t cookie;
	char sni[PROTOCOL_SNI_MAX];
};

struct proto_track {
	struct kmond *k;
	int verdict_fd;
	volatile uint32_t *gen;
	struct hashmap *conns; /* cookie -> struct conn * */
	struct endpoint *eps;
	size_t neps;
	/* votes by service, kept when the processes that served exit (a
	 * server that forks per connection) */
	struct svc_votes {
		uint32_t svc;
		uint64_t votes[PROTO_NR];
	} * svcs;
	size_t nsvcs;
	uint64_t decided, dropped;
	/* Connections forgotten lately, by cookie: a request answered after
	 * its socket closed (see answer_after_close in tcp.bpf.c) comes
	 * after the close, and one the kernel finished before it took the
	 * verdict may come after the sweep. Direct-mapped: an older one is
	 * overwritten. */
	struct {
		uint64_t cookie;
		int proto;
	} closed[RECENTLY_CLOSED];
	struct sni_slot *snis; /* allocated at the first name */
	/* verdicts for the kernel, written once per interval in one call */
	uint64_t *pending;
	struct proto_verdict *pending_v;
	size_t npending, cap_pending;
	struct record rec;
};

struct proto_track *proto_track__new(struct kmond *k, int verdict_fd,
				     volatile uint32_t *gen)
{
	struct proto_track *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->k = k;
	t->verdict_fd = verdict_fd;
	t->gen = gen;
	t->conns = hashmap__new();
	record__init(&t->rec);
	return t;
}

void proto_track__free(struct proto_track *t)
{
	uint64_t key, val;
	size_t pos = 0;

	if (!t)
		return;
	while (hashmap__next(t->conns, &pos, &key, &val)) {
		struct conn *c = (struct conn *)(uintptr_t)val;

		free(c->hello);
		free(c->sni);
		free(c);
	}
	hashmap__free(t->conns);
	free(t->eps);
	free(t->svcs);
	free(t->snis);
	free(t->pending);
	free(t->pending_v);
	record__free(&t->rec);
	free(t);
}

uint64_t proto_track__decided(const struct proto_track *t)
{
	return t->decided;
}

uint64_t proto_track__dropped(const struct proto_track *t)
{
	return t->dropped;
}

/* --- endpoints --- */

static struct endpoint *endpoint_of(struct proto_track *t, const struct conn *c)
{
	struct endpoint *e;

	for (size_t i = 0; i < t->neps; i++) {
		e = &t->eps[i];
		if (e->pid == c->pid && e->t.lport == c->t.lport &&
		    e->t.family == c->t.family &&
		    !memcmp(e->t.laddr, c->t.laddr, 16))
			return e;
	}
	e = realloc(t->eps, (t->neps + 1) * sizeof(*e));
	if (!e)
		abort();
	t->eps = e;
	e = &t->eps[t->neps++];
	memset(e, 0, sizeof(*e));
	e->pid = c->pid;
	e->svc = c->svc;
	memcpy(e->t.laddr, c->t.laddr, 16);
	e->t.lport = c->t.lport;
	e->t.family = c->t.family;
	e->reported = -1;
	return e;
}

/* The protocol most of its connections were given. */
static int endpoint_proto(const struct endpoint *e)
{
	int best = PROTO_UNKNOWN;

	for (int p = 0; p < PROTO_NR; p++)
		if (e->votes[p] > e->votes[best])
			best = p;
	return best;
}

static void report_endpoint(struct proto_track *t, struct endpoint *e,
			    uint64_t ts)
{
	char addr[INET6_ADDRSTRLEN];
	struct proc_name who;
	int proto = endpoint_proto(e);

	provider__name(t->k->provider, e->pid, e->svc, &who);
	if (!inet_ntop(e->t.family == AF_INET6 ? AF_INET6 : AF_INET, e->t.laddr,
		       addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	record__begin(&t->rec, "endpoint", ts, t->k->cfg.node);
	record__process(&t->rec, e->pid, who.comm, who.service);
	record__str(&t->rec, "addr", addr);
	record__u64(&t->rec, "port", e->t.lport);
	record__str(&t->rec, "protocol", protocol__name(proto));
	record__u64(&t->rec, "connections", e->connections);
	record__u64(&t->rec, "agree", e->votes[proto]);
	if (proto == PROTO_TLS && e->sni[0])
		record__str(&t->rec, "tls_sni", e->sni);
	record__end(&t->rec);
	exporter__send(t->k->exporter, &t->rec);
	e->reported = proto;
	e->last_report = ts;
	e->new_votes = 0;
}

static uint64_t *svc_votes(struct proto_track *t, uint32_t svc)
{
	struct svc_votes *v;

	for (size_t i = 0; i < t->nsvcs; i++)
		if (t->svcs[i].svc == svc)
			return t->svcs[i].votes;
	v = realloc(t->svcs, (t->nsvcs + 1) * sizeof(*v));
	if (!v)
		abort();
	t->svcs = v;
	v = &t->svcs[t->nsvcs++];
	memset(v, 0, sizeof(*v));
	v->svc = svc;
	return v->votes;
}

/* A decided server connection votes for its endpoint; a connection whose
 * client sent nothing has no say. The endpoint is reported when its
 * protocol is first known or changes. */
static void vote(struct proto_track *t, struct conn *c)
{
	struct endpoint *e;
	bool client_spoke = false;

	if (c->counted || c->client || !c->pid)
		return;
	c->counted = true;
	for (int i = 0; i < c->nmsgs; i++)
		client_spoke |= !c->msgs[i].from_server;
	if (!client_spoke && c->proto == PROTO_UNKNOWN)
		return;
	if (c->svc)
		svc_votes(t, c->svc)[c->proto]++;
	e = endpoint_of(t, c);
	e->votes[c->proto]++;
	e->connections++;
	e->new_votes++;
	if (c->sni)
		snprintf(e->sni, sizeof(e->sni), "%s", c->sni);
	if (endpoint_proto(e) != e->reported)
		report_endpoint(t, e, clock_ns(CLOCK_REALTIME));
}

/* A TLS connection now read in plaintext (its plaintext's first sample
 * came, under cookie | PROTO_TLS_COOKIE): its ciphertext's `tls` no
 * longer speaks for its endpoint, the plaintext's verdict does. */
static void unvote_ciphertext(struct proto_track *t, uint64_t cookie)
{
	uint64_t *v = hashmap__find(t->conns, cookie & ~PROTO_TLS_COOKIE);
	struct conn *c = v ? (struct conn *)(uintptr_t)*v : NULL;
	struct endpoint *e;

	if (!c ||
	    (c->counted && (c->client || !c->pid || c->proto != PROTO_TLS)))
		return;
	if (!c->counted) { /* not yet: never */
		c->counted = true;
		return;
	}
	if (c->svc)
		svc_votes(t, c->svc)[PROTO_TLS]--;
	e = endpoint_of(t, c);
	e->votes[PROTO_TLS]--;
	e->connections--;
}

int proto_track__server(struct proto_track *t, uint32_t pid, uint32_t svc)
{
	uint64_t votes[PROTO_NR] = { 0 };
	int best = PROTO_UNKNOWN;

	if (svc)
		memcpy(votes, svc_votes(t, svc), sizeof(votes));
	for (size_t i = 0; i < t->neps && !svc; i++) {
		const struct endpoint *e = &t->eps[i];

		if (e->pid != pid)
			continue;
		for (int p = 0; p < PROTO_NR; p++)
			votes[p] += e->votes[p];
	}
	for (int p = 0; p < PROTO_NR; p++)
		if (votes[p] > votes[best])
			best = p;
	return best;
}

/* --- connections --- */

/* The kernel takes the verdict at the connection's next segment or
 * request; once the owner is known (the vote needs it). Verdicts wait
 * for the interval's end: most connections of a busy server are closed
 * by then and need none, and the rest go in one system call. */
static void tell(struct proto_track *t, struct conn *c)
{
	if (c->told || !c->decided || !c->pid)
		return;
	c->told = true;
	vote(t, c);
	if (c->closed)
		return;
	if (t->npending == t->cap_pending) {
		t->cap_pending = t->cap_pending ? 2 * t->cap_pending : 256;
		t->pending = realloc(t->pending,
				     t->cap_pending * sizeof(*t->pending));
		t->pending_v = realloc(t->pending_v,
				       t->cap_pending * sizeof(*t->pending_v));
		if (!t->pending || !t->pending_v)
			abort();
	}
	t->pending[t->npending++] = c->cookie;
}

/* Writes the verdicts of the connections still open. */
static void flush_verdicts(struct proto_track *t)
{
	__u32 n = 0;

	for (size_t i = 0; i < t->npending; i++) {
		uint64_t *v = hashmap__find(t->conns, t->pending[i]);
		struct conn *c = v ? (struct conn *)(uintptr_t)*v : NULL;

		if (!c || c->closed)
			continue;
		t->pending[n] = c->cookie;
		t->pending_v[n++] = (struct proto_verdict){ .proto = c->proto };
	}
	t->npending = 0;
	if (!n)
		return;
	if (bpf_map_update_batch(t->verdict_fd, t->pending, t->pending_v, &n,
				 NULL))
		for (__u32 i = 0; i < n; i++) /* without batch updates */
			bpf_map_update_elem(t->verdict_fd, &t->pending[i],
					    &t->pending_v[i], BPF_ANY);
	/* after the writes: connections look again */
	__atomic_add_fetch(t->gen, 1, __ATOMIC_RELEASE);
}

static void classify(struct proto_track *t, struct conn *c)
{
	struct proto_msg m[2 * PROTO_MAX_SEGS];
	struct proto_result r;
	bool done =
		c->closed || c->idle ||
		(c->ndir[0] >= PROTO_MAX_SEGS && c->ndir[1] >= PROTO_MAX_SEGS);

	if (c->decided)
		return;
	for (int i = 0; i < c->nmsgs; i++)
		m[i] = (struct proto_msg){ c->msgs[i].from_server,
					   c->msgs[i].len, c->msgs[i].caplen,
					   c->msgs[i].hello ? c->hello :
							      c->msgs[i].data };
	protocol__classify(m, c->nmsgs, done, &r);
	if (!r.decided)
		return;
	c->decided = true;
	c->proto = r.proto;
	if (r.sni[0] && !(c->sni = strdup(r.sni)))
		abort();
	t->decided++;
	if (r.proto == PROTO_TLS && r.sni[0]) {
		struct sni_slot *slot;

		if (!t->snis && !(t->snis = calloc(SNI_SLOTS, sizeof(*slot))))
			abort();
		slot = &t->snis[c->cookie % SNI_SLOTS];
		slot->cookie = c->cookie;
		snprintf(slot->sni, sizeof(slot->sni), "%s", r.sni);
	}
}

const char *proto_track__sni(const struct proto_track *t, uint64_t cookie)
{
	const struct sni_slot *slot;

	if (!t || !t->snis || !cookie)
		return NULL;
	slot = &t->snis[cookie % SNI_SLOTS];
	return slot->cookie == cookie ? slot->sni : NULL;
}

static struct conn *conn_get(struct proto_track *t, uint64_t cookie)
{
	uint64_t *v = hashmap__find(t->conns, cookie);
	struct conn *c;

	if (v)
		return (struct conn *)(uintptr_t)*v;
	if (hashmap__count(t->conns) >= MAX_CONNS) {
		t->dropped++;
		return NULL;
	}
	c = malloc(sizeof(*c));
	if (!c)
		abort();
	memset(c, 0, offsetof(struct conn, msgs));
	c->cookie = cookie;
	hashmap__set(t->conns, cookie, (uintptr_t)c);
	return c;
}

/* In send order per direction; across directions, by time. */
static void add_msg(struct conn *c, const struct proto_sample *s)
{
	struct msg *m;
	int i;

	if (c->nmsgs == 2 * PROTO_MAX_SEGS || s->dir > 1)
		return;
	for (i = c->nmsgs; i > 0 && c->msgs[i - 1].ts > s->ts; i--)
		c->msgs[i] = c->msgs[i - 1];
	m = &c->msgs[i];
	m->ts = s->ts;
	/* the kernel's direction is the monitored socket's */
	m->from_server = c->client ? s->dir == PROTO_DIR_IN :
				     s->dir == PROTO_DIR_OUT;
	m->len = s->len;
	m->hello = false;
	m->caplen = s->caplen <= PROTO_SAMPLE_BYTES ? s->caplen : 0;
	/* the kernel sent a hello's sample whole (proto_hello) */
	if (s->caplen > PROTO_SAMPLE_BYTES && s->caplen <= PROTO_HELLO_BYTES &&
	    !c->hello) {
		c->hello = malloc(PROTO_HELLO_BYTES);
		if (!c->hello)
			abort();
		/* the data runs on past s->data into proto_hello.more */
		memcpy(c->hello,
		       (const uint8_t *)s + offsetof(struct proto_sample, data),
		       s->caplen);
		m->hello = true;
		m->caplen = s->caplen;
	}
	memcpy(m->data, s->data,
	       m->caplen < PROTO_SAMPLE_BYTES ? m->caplen : PROTO_SAMPLE_BYTES);
	c->nmsgs++;
	c->ndir[s->dir]++;
}

static void owner(struct conn *c, uint32_t pid, uint32_t svc, uint8_t role,
		  const struct tcp_tuple *tuple)
{
	c->client = role == TCP_ROLE_CLIENT;
	if (pid && !c->pid) {
		c->pid = pid;
		c->svc = svc;
		c->t = *tuple;
	}
}

void proto_track__sample(struct proto_track *t, const struct proto_sample *s)
{
	struct conn *c;

	if (!s->cookie)
		return;
	/* the first sample of a plaintext: a connection of its own */
	if ((s->cookie & PROTO_TLS_COOKIE) &&
	    !hashmap__find(t->conns, s->cookie))
		unvote_ciphertext(t, s->cookie);
	if (!(c = conn_get(t, s->cookie)))
		return;
	c->last_ns = s->ts;
	owner(c, s->pid, s->svc, s->role, &s->t);
	if (c->decided)
		return;
	add_msg(c, s);
	/* a client's request alone decides nothing */
	if (c->ndir[c->client ? PROTO_DIR_IN : PROTO_DIR_OUT] ||
	    c->ndir[c->client ? PROTO_DIR_OUT : PROTO_DIR_IN] >=
		    PROTO_MAX_SEGS) {
		classify(t, c);
		tell(t, c);
	}
}

/* Frees c, remembering its verdict among the recent ones. */
static void forget(struct proto_track *t, struct conn *c)
{
	uint64_t cookie = c->cookie;

	if (c->decided) {
		t->closed[cookie % RECENTLY_CLOSED].cookie = cookie;
		t->closed[cookie % RECENTLY_CLOSED].proto = c->proto;
	}
	hashmap__delete(t->conns, cookie);
	free(c->hello);
	free(c->sni);
	free(c);
}

int proto_track__close(struct proto_track *t, const struct proto_close *s)
{
	uint64_t *v = s->cookie ? hashmap__find(t->conns, s->cookie) : NULL;
	struct conn *c = v ? (struct conn *)(uintptr_t)*v : NULL;
	int proto;

	if (!c)
		return -1;
	owner(c, s->pid, s->svc, s->role, &s->t);
	c->closed = true;
	classify(t, c);
	tell(t, c);
	proto = c->proto;
	forget(t, c);
	return proto;
}

int proto_track__conn(struct proto_track *t, uint64_t cookie)
{
	uint64_t *v = cookie ? hashmap__find(t->conns, cookie) : NULL;
	struct conn *c = v ? (struct conn *)(uintptr_t)*v : NULL;

	if (!c && cookie &&
	    t->closed[cookie % RECENTLY_CLOSED].cookie == cookie)
		return t->closed[cookie % RECENTLY_CLOSED].proto;
	return c && c->decided ? c->proto : PROTO_UNKNOWN;
}

/* Forgets connections that closed, or were told, before this interval
 * (the requests finished meanwhile have looked them up); decides those
 * idle too long. */
static void sweep(struct proto_track *t)
{
	uint64_t now = mono_ns(), key, val, *gone = NULL;
	size_t pos = 0, ngone = 0, cap = 0;

	while (hashmap__next(t->conns, &pos, &key, &val)) {
		struct conn *c = (struct conn *)(uintptr_t)val;

		if (!c->decided && now - c->last_ns > IDLE_NS) {
			c->idle = true;
			classify(t, c);
			tell(t, c);
		}
		/* An owner never learnt: an accepted socket of a process
		 * nobody monitors (the kernel forgot it). */
		if (c->idle && !c->pid)
			c->closed = true;
		if (!(c->closed || c->told) || !c->sweeps++)
			continue;
		if (ngone == cap) {
			cap = cap ? 2 * cap : 64;
			gone = realloc(gone, cap * sizeof(*gone));
			if (!gone)
				abort();
		}
		gone[ngone++] = key;
	}
	for (size_t i = 0; i < ngone; i++) {
		uint64_t *v = hashmap__find(t->conns, gone[i]);

		forget(t, (struct conn *)(uintptr_t)*v);
	}
	free(gone);
}

void proto_track__collect(struct proto_track *t, uint64_t ts)
{
	size_t keep = 0;

	flush_verdicts(t);
	sweep(t);
	for (size_t i = 0; i < t->neps; i++) {
		struct endpoint *e = &t->eps[i];

		if (e->new_votes && ts > e->last_report &&
		    ts - e->last_report >= ENDPOINT_EVERY_NS)
			report_endpoint(t, e, ts);
		/* a process that exited serves nothing more */
		if (provider__exited(t->k->provider, e->pid))
			continue;
		t->eps[keep++] = *e;
	}
	t->neps = keep;
}
