// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The merged service graph (see graph.h for the merge rule).
 *
 * Reports are summed as they arrive into "raw" edges keyed by the names
 * exactly as written and the side; resolving addresses and choosing a
 * side happen in topo__merge, so an alias learnt late still applies to
 * every report that came before it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumers/common/percent.h"
#include "graph.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/histogram.h"
#include "lib/json_parse.h"
#include "lib/protocol.h"
#include "lib/record.h"
#include "lib/xalloc.h"

/* Percent of a report's requests put at each of its percentiles. */
#define MASS_P50 50
#define MASS_P95 45
#define MASS_P99 5

/* A string-keyed entry; every table below starts with one. */
struct keyed {
	char *key; /* owned */
	size_t klen;
	size_t next; /* index + 1 of the next entry with the same hash */
};

struct table {
	struct hashmap *index; /* hash -> index + 1 of the first entry */
	void *items;
	size_t n, cap, size; /* size: of one item */
};

/* Request outcomes summed over reports. */
struct outcome_sum {
	uint64_t reports; /* the reports that carried them */
	uint64_t outcomes, errors;
	uint64_t status[TOPO_STATUS_CLASSES];
};

struct raw_edge {
	struct keyed k; /* "src\0dst\0side" */
	const char *src, *dst; /* into k.key */
	enum topo_side side;
	uint64_t requests, bytes, reports, first_ts, last_ts;
	struct outcome_sum outcomes;
	struct hist *lat; /* NULL until a report carries latency */
	struct table nodes; /* of struct keyed: node names */
	uint64_t protos[PROTO_NR]; /* requests by protocol id */
};

struct alias {
	struct keyed k; /* the address */
	char *service;
	bool ambiguous;
};

struct side_sum {
	uint64_t requests, bytes, reports, first_ts, last_ts;
	struct outcome_sum outcomes;
	struct hist lat;
	struct table nodes;
	uint64_t protos[PROTO_NR];
};

struct merged {
	struct keyed k; /* "src\0dst" */
	const char *src, *dst;
	struct side_sum sides[TOPO_SIDES];
};

struct topo_graph {
	struct table raw; /* struct raw_edge */
	struct table aliases; /* struct alias */
	struct table nodes; /* struct keyed: every node seen */
	uint64_t records, rejected;
	/* topo__merge's output, rebuilt each time */
	struct table merged; /* struct merged */
	struct topo_edge *edges;
	const char **node_lists;
};

static void table__init(struct table *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
}

static struct keyed *table__at(const struct table *t, size_t i)
{
	return (struct keyed *)((char *)t->items + i * t->size);
}

static struct keyed *table__find(const struct table *t, const char *key,
				 size_t klen)
{
	uint64_t *slot;
	size_t i;

	if (!t->index)
		return NULL;
	slot = hashmap__find(t->index, fnv1a(key, klen));
	for (i = slot ? *slot : 0; i; i = table__at(t, i - 1)->next) {
		struct keyed *k = table__at(t, i - 1);

		if (k->klen == klen && memcmp(k->key, key, klen) == 0)
			return k;
	}
	return NULL;
}

/* The entry for key, created zeroed (key copied) when absent. Pointers
 * into the table are valid until the next insert. */
static struct keyed *table__get(struct table *t, const char *key, size_t klen,
				bool *created)
{
	uint64_t h = fnv1a(key, klen), *slot;
	struct keyed *k = table__find(t, key, klen);

	if (created)
		*created = !k;
	if (k)
		return k;
	if (!t->index)
		t->index = hashmap__new();
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->items = xrealloc(t->items, t->cap * t->size);
	}
	k = table__at(t, t->n);
	memset(k, 0, t->size);
	k->key = xrealloc(NULL, klen + 1);
	memcpy(k->key, key, klen);
	k->key[klen] = '\0';
	k->klen = klen;
	slot = hashmap__find(t->index, h);
	k->next = slot ? *slot : 0;
	hashmap__set(t->index, h, ++t->n);
	return k;
}

/* Frees the keys; the caller frees what its items own first. */
static void table__free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(table__at(t, i)->key);
	free(t->items);
	hashmap__free(t->index);
	table__init(t, t->size);
}

static void table__add_name(struct table *t, const char *name)
{
	table__get(t, name, strlen(name), NULL);
}

struct topo_graph *topo__new(void)
{
	struct topo_graph *g = xrealloc(NULL, sizeof(*g));

	memset(g, 0, sizeof(*g));
	table__init(&g->raw, sizeof(struct raw_edge));
	table__init(&g->aliases, sizeof(struct alias));
	table__init(&g->nodes, sizeof(struct keyed));
	table__init(&g->merged, sizeof(struct merged));
	return g;
}

static void merged__free(struct topo_graph *g)
{
	for (size_t i = 0; i < g->merged.n; i++) {
		struct merged *m = (struct merged *)table__at(&g->merged, i);

		for (int s = 0; s < TOPO_SIDES; s++)
			table__free(&m->sides[s].nodes);
	}
	table__free(&g->merged);
	free(g->edges);
	free(g->node_lists);
	g->edges = NULL;
	g->node_lists = NULL;
}

void topo__free(struct topo_graph *g)
{
	if (!g)
		return;
	merged__free(g);
	for (size_t i = 0; i < g->raw.n; i++) {
		struct raw_edge *e = (struct raw_edge *)table__at(&g->raw, i);

		free(e->lat);
		table__free(&e->nodes);
	}
	table__free(&g->raw);
	for (size_t i = 0; i < g->aliases.n; i++)
		free(((struct alias *)table__at(&g->aliases, i))->service);
	table__free(&g->aliases);
	table__free(&g->nodes);
	free(g);
}

/* addr belongs to service; a second, different claim makes it ambiguous. */
static void alias__learn(struct topo_graph *g, const char *addr,
			 const char *service)
{
	struct alias *a;
	bool created;

	if (!addr || strcmp(addr, service) == 0)
		return;
	a = (struct alias *)table__get(&g->aliases, addr, strlen(addr),
				       &created);
	if (created)
		a->service = xstrdup(service);
	else if (!a->ambiguous && strcmp(a->service, service))
		a->ambiguous = true;
}

static const char *alias__resolve(const struct topo_graph *g, const char *name)
{
	const struct alias *a = (const struct alias *)table__find(
		&g->aliases, name, strlen(name));

	return a && !a->ambiguous ? a->service : name;
}

/* A report's percentiles as a distribution, weighted by its requests. */
static void hist__add_report(struct hist *h, uint64_t requests, uint64_t p50,
			     uint64_t p95, uint64_t p99)
{
	hist__add(h, p50, requests * MASS_P50);
	hist__add(h, p95, requests * MASS_P95);
	hist__add(h, p99, requests * MASS_P99);
}

static void span__add(uint64_t *first, uint64_t *last, uint64_t reports,
		      uint64_t from, uint64_t to)
{
	if (!reports || from < *first)
		*first = from;
	if (!reports || to > *last)
		*last = to;
}

static void outcomes__add(struct outcome_sum *sum,
			  const struct outcome_sum *more)
{
	sum->reports += more->reports;
	sum->outcomes += more->outcomes;
	sum->errors += more->errors;
	for (int c = 0; c < TOPO_STATUS_CLASSES; c++)
		sum->status[c] += more->status[c];
}

/* The raw edge of r's names as written and side, created empty. */
static struct raw_edge *raw_edge__get(struct topo_graph *g,
				      const struct topo_report *r)
{
	size_t ls = strlen(r->src), ld = strlen(r->dst);
	char *key = xrealloc(NULL, ls + ld + 3);
	struct raw_edge *e;
	bool created;

	memcpy(key, r->src, ls + 1);
	memcpy(key + ls + 1, r->dst, ld + 1);
	key[ls + ld + 2] = r->side == TOPO_SERVER ? 's' : 'c';
	e = (struct raw_edge *)table__get(&g->raw, key, ls + ld + 3, &created);
	free(key);
	if (created) {
		e->src = e->k.key;
		e->dst = e->k.key + ls + 1;
		e->side = r->side;
		table__init(&e->nodes, sizeof(struct keyed));
	}
	return e;
}

void topo__add(struct topo_graph *g, const struct topo_report *r)
{
	struct raw_edge *e = raw_edge__get(g, r);

	span__add(&e->first_ts, &e->last_ts, e->reports, r->ts, r->ts);
	e->reports++;
	e->requests += r->requests;
	/* a name kmond does not give counts as unknown */
	for (int p = 1; r->protocol && p < PROTO_NR; p++)
		if (!strcmp(r->protocol, protocol__name(p)))
			e->protos[p] += r->requests;
	e->bytes += r->bytes;
	if (r->has_outcomes) {
		struct outcome_sum one = { .reports = 1,
					   .outcomes = r->outcomes,
					   .errors = r->errors };

		memcpy(one.status, r->status, sizeof(one.status));
		outcomes__add(&e->outcomes, &one);
	}
	if (r->requests && (r->p50 || r->p95 || r->p99)) {
		if (!e->lat) {
			e->lat = xrealloc(NULL, sizeof(*e->lat));
			hist__reset(e->lat);
		}
		hist__add_report(e->lat, r->requests, r->p50, r->p95, r->p99);
	}
	table__add_name(&e->nodes, r->node);
	table__add_name(&g->nodes, r->node);
	alias__learn(g, r->src_addr, r->src);
	alias__learn(g, r->dst_addr, r->dst);
	g->records++;
}

int topo__add_json(struct topo_graph *g, const char *json, size_t len,
		   char *err, size_t errlen)
{
	/* the record's strings, decoded (most records are a few hundred
	 * bytes) */
	char small[1024];
	char *strings = len < sizeof(small) ? small : xmalloc(len + 1);
	struct topo_report r;
	int ret = topo__parse(json, len, &r, strings, err, errlen);

	if (ret)
		g->rejected++;
	else
		topo__add(g, &r);
	if (strings != small)
		free(strings);
	return ret;
}

/* --- merging --- */

static void side__add(struct side_sum *s, const struct raw_edge *e)
{
	span__add(&s->first_ts, &s->last_ts, s->reports, e->first_ts,
		  e->last_ts);
	s->reports += e->reports;
	s->requests += e->requests;
	s->bytes += e->bytes;
	outcomes__add(&s->outcomes, &e->outcomes);
	for (int p = 0; p < PROTO_NR; p++)
		s->protos[p] += e->protos[p];
	if (e->lat)
		hist__merge(&s->lat, e->lat);
	for (size_t i = 0; i < e->nodes.n; i++)
		table__add_name(&s->nodes, table__at(&e->nodes, i)->key);
}

static void merged__add(struct topo_graph *g, const struct raw_edge *e)
{
	const char *src = alias__resolve(g, e->src);
	const char *dst = alias__resolve(g, e->dst);
	size_t ls = strlen(src), ld = strlen(dst);
	char *key = xrealloc(NULL, ls + ld + 2);
	struct merged *m;
	bool created;

	memcpy(key, src, ls + 1);
	memcpy(key + ls + 1, dst, ld + 1);
	m = (struct merged *)table__get(&g->merged, key, ls + ld + 2, &created);
	free(key);
	if (created) {
		m->src = m->k.key;
		m->dst = m->k.key + ls + 1;
		for (int s = 0; s < TOPO_SIDES; s++) {
			hist__reset(&m->sides[s].lat);
			table__init(&m->sides[s].nodes, sizeof(struct keyed));
		}
	}
	side__add(&m->sides[e->side], e);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int edge_cmp(const void *a, const void *b)
{
	const struct topo_edge *x = a, *y = b;
	int c = strcmp(x->src, y->src);

	return c ? c : strcmp(x->dst, y->dst);
}

/* Sorted, NULL-terminated names of t, from the pool at *next. */
static const char **names_of(const struct table *t, const char ***next)
{
	const char **list = *next;

	for (size_t i = 0; i < t->n; i++)
		list[i] = table__at(t, i)->key;
	qsort(list, t->n, sizeof(*list), name_cmp);
	list[t->n] = NULL;
	*next += t->n + 1;
	return list;
}

const struct topo_edge *topo__merge(struct topo_graph *g, size_t *n)
{
	const char **pool;
	size_t i, names = 0;

	merged__free(g);
	table__init(&g->merged, sizeof(struct merged));
	for (i = 0; i < g->raw.n; i++)
		merged__add(g, (struct raw_edge *)table__at(&g->raw, i));

	g->edges = xrealloc(NULL, g->merged.n * sizeof(*g->edges));
	for (i = 0; i < g->merged.n; i++) {
		struct merged *m = (struct merged *)table__at(&g->merged, i);

		names += m->sides[0].nodes.n + m->sides[1].nodes.n + 2;
	}
	g->node_lists = pool = xrealloc(NULL, names * sizeof(*pool));
	for (i = 0; i < g->merged.n; i++) {
		struct merged *m = (struct merged *)table__at(&g->merged, i);
		struct topo_edge *e = &g->edges[i];
		/* The server side wins whenever it reported at all. */
		enum topo_side side = m->sides[TOPO_SERVER].reports ?
					      TOPO_SERVER :
					      TOPO_CLIENT;
		struct side_sum *s = &m->sides[side];

		memset(e, 0, sizeof(*e));
		e->src = m->src;
		e->dst = m->dst;
		e->side = side;
		e->requests = s->requests;
		e->bytes = s->bytes;
		e->reports = s->reports;
		e->first_ts = s->first_ts;
		e->last_ts = s->last_ts;
		e->has_outcomes = s->outcomes.reports > 0;
		e->outcomes = s->outcomes.outcomes;
		e->errors = s->outcomes.errors;
		memcpy(e->status, s->outcomes.status, sizeof(e->status));
		if (hist__count(&s->lat)) {
			e->p50 = hist__percentile(&s->lat, 50);
			e->p95 = hist__percentile(&s->lat, 95);
			e->p99 = hist__percentile(&s->lat, 99);
		}
		for (int k = 0; k < TOPO_SIDES; k++)
			e->nodes[k] = names_of(&m->sides[k].nodes, &pool);
		for (int p = 1, best = 0; p < PROTO_NR; p++)
			if (s->protos[p] > s->protos[best]) {
				best = p;
				e->protocol = protocol__name(p);
			}
	}
	qsort(g->edges, g->merged.n, sizeof(*g->edges), edge_cmp);
	*n = g->merged.n;
	return g->edges;
}

uint64_t topo__records(const struct topo_graph *g)
{
	return g->records;
}

uint64_t topo__rejected(const struct topo_graph *g)
{
	return g->rejected;
}

/* --- output --- */

static const char *side_name(enum topo_side side)
{
	return side == TOPO_SERVER ? "server" : "client";
}

/* Absent (not 0) for an edge reported by a kmond before outcomes; the
 * rate only where there is something to divide by. */
static void json_outcomes(struct record *r, const struct topo_edge *e)
{
	if (!e->has_outcomes)
		return;
	record__u64(r, "outcomes", e->outcomes);
	record__u64(r, "errors", e->errors);
	if (e->outcomes)
		record__double(r, "error_rate",
			       (double)e->errors / (double)e->outcomes);
	for (int c = 0; c < TOPO_STATUS_CLASSES; c++) {
		char name[16];

		snprintf(name, sizeof(name), "status_%dxx", c + 1);
		if (e->status[c])
			record__u64(r, name, e->status[c]);
	}
}

static void json_names(struct record *r, const char *name,
		       const char *const *list)
{
	record__array_begin(r, name);
	for (; *list; list++)
		record__array_str(r, *list);
	record__array_end(r);
}

void topo__json(struct topo_graph *g, uint64_t ts, const char *node,
		struct record *r)
{
	const struct topo_edge *edges;
	const char **nodes;
	size_t n, i;

	edges = topo__merge(g, &n);
	nodes = xrealloc(NULL, (g->nodes.n + 1) * sizeof(*nodes));
	names_of(&g->nodes, &(const char **){ nodes });

	record__begin(r, "topology_graph", ts, node);
	record__u64(r, "records", g->records);
	record__u64(r, "rejected", g->rejected);
	json_names(r, "nodes", nodes);
	record__array_begin(r, "edges");
	for (i = 0; i < n; i++) {
		const struct topo_edge *e = &edges[i];

		record__object_begin(r, NULL);
		record__str(r, "src", e->src);
		record__str(r, "dst", e->dst);
		record__str(r, "side", side_name(e->side));
		record__u64(r, "requests", e->requests);
		record__u64(r, "bytes", e->bytes);
		record__u64(r, "latency_p50_ns", e->p50);
		record__u64(r, "latency_p95_ns", e->p95);
		record__u64(r, "latency_p99_ns", e->p99);
		record__u64(r, "first_ts", e->first_ts);
		record__u64(r, "last_ts", e->last_ts);
		record__u64(r, "reports", e->reports);
		if (e->protocol)
			record__str(r, "protocol", e->protocol);
		json_outcomes(r, e);
		json_names(r, "server_nodes", e->nodes[TOPO_SERVER]);
		json_names(r, "client_nodes", e->nodes[TOPO_CLIENT]);
		record__object_end(r);
	}
	record__array_end(r);
	record__end(r);
	free(nodes);
}

/* A DOT double-quoted string: quotes and backslashes escaped, control
 * characters dropped (a service name is not trusted input). */
static void dot_str(struct strbuf *out, const char *s)
{
	strbuf__addc(out, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf__addc(out, '\\');
		if ((unsigned char)*s >= 0x20)
			strbuf__addc(out, *s);
	}
	strbuf__addc(out, '"');
}

static void dot_duration(struct strbuf *out, uint64_t ns)
{
	if (ns < 1000)
		strbuf__addf(out, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		strbuf__addf(out, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		strbuf__addf(out, "%.1f ms", ns / 1e6);
	else
		strbuf__addf(out, "%.2f s", ns / 1e9);
}

void topo__dot(struct topo_graph *g, struct strbuf *out)
{
	const struct topo_edge *edges;
	struct table services;
	const char **names;
	size_t n, i;

	edges = topo__merge(g, &n);
	table__init(&services, sizeof(struct keyed));
	for (i = 0; i < n; i++) {
		table__add_name(&services, edges[i].src);
		table__add_name(&services, edges[i].dst);
	}
	names = xrealloc(NULL, (services.n + 1) * sizeof(*names));
	names_of(&services, &(const char **){ names });

	strbuf__adds(out, "digraph kmon_topology {\n"
			  "\trankdir=LR;\n"
			  "\tnode [shape=box, style=rounded];\n");
	for (i = 0; names[i]; i++) {
		const char *proto = NULL;
		uint64_t most = 0;

		/* a server shows the protocol of the edge into it with the
		 * most requests */
		for (size_t k = 0; k < n; k++)
			if (edges[k].protocol && edges[k].requests >= most &&
			    !strcmp(edges[k].dst, names[i])) {
				most = edges[k].requests;
				proto = edges[k].protocol;
			}
		strbuf__addc(out, '\t');
		dot_str(out, names[i]);
		if (proto) {
			strbuf__adds(out, " [label=");
			strbuf__addc(out, '"');
			for (const char *c = names[i]; *c; c++) {
				if (*c == '"' || *c == '\\')
					strbuf__addc(out, '\\');
				if ((unsigned char)*c >= 0x20)
					strbuf__addc(out, *c);
			}
			strbuf__addf(out, "\\n%s\"]", proto);
		}
		strbuf__adds(out, ";\n");
	}
	for (i = 0; i < n; i++) {
		const struct topo_edge *e = &edges[i];

		strbuf__addc(out, '\t');
		dot_str(out, e->src);
		strbuf__adds(out, " -> ");
		dot_str(out, e->dst);
		strbuf__addf(out, " [label=\"%llu req",
			     (unsigned long long)e->requests);
		if (e->p95) {
			strbuf__adds(out, "\\np95 ");
			dot_duration(out, e->p95);
		}
		if (e->outcomes) {
			char pct[32];

			percent__format(pct, sizeof(pct),
					(double)e->errors /
						(double)e->outcomes);
			strbuf__addf(out, "\\n%s errors", pct);
		}
		strbuf__adds(out, "\"");
		if (e->errors)
			strbuf__adds(out, ", color=red, fontcolor=red");
		/* Seen by its client only: the server is not monitored. */
		if (e->side == TOPO_CLIENT)
			strbuf__adds(out, ", style=dashed");
		strbuf__adds(out, "];\n");
	}
	strbuf__adds(out, "}\n");
	free(names);
	table__free(&services);
}

/* --- partial graphs (kmon-topo --fleet) ---
 *
 * A partial is the raw edges, aliases and node names as they are, not
 * merged: adding partials sums them exactly as adding their records
 * would (sums, bucket counts, first and last, node sets; an address
 * claimed by two services in two partials is ambiguous as in one). */

static void json_hist(struct record *r, const struct hist *h)
{
	char name[16];

	record__object_begin(r, "lat");
	record__u64(r, "count", h->count);
	record__u64(r, "sum", h->sum);
	record__u64(r, "min", h->min);
	record__u64(r, "max", h->max);
	record__object_begin(r, "buckets");
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		snprintf(name, sizeof(name), "%u", b);
		record__u64(r, name, h->buckets[b]);
	}
	record__object_end(r);
	record__object_end(r);
}

static void json_raw_edge(struct record *r, const struct raw_edge *e)
{
	const char **names = xrealloc(NULL, (e->nodes.n + 1) * sizeof(*names));
	char name[16];

	record__object_begin(r, NULL);
	record__str(r, "src", e->src);
	record__str(r, "dst", e->dst);
	record__str(r, "side", side_name(e->side));
	record__u64(r, "reports", e->reports);
	record__u64(r, "requests", e->requests);
	record__u64(r, "bytes", e->bytes);
	record__u64(r, "first_ts", e->first_ts);
	record__u64(r, "last_ts", e->last_ts);
	record__object_begin(r, "protocols");
	for (int p = 1; p < PROTO_NR; p++)
		if (e->protos[p])
			record__u64(r, protocol__name(p), e->protos[p]);
	record__object_end(r);
	if (e->outcomes.reports) {
		record__u64(r, "outcome_reports", e->outcomes.reports);
		record__u64(r, "outcomes", e->outcomes.outcomes);
		record__u64(r, "errors", e->outcomes.errors);
		for (int c = 0; c < TOPO_STATUS_CLASSES; c++) {
			snprintf(name, sizeof(name), "status_%dxx", c + 1);
			record__u64(r, name, e->outcomes.status[c]);
		}
	}
	if (e->lat)
		json_hist(r, e->lat);
	names_of(&e->nodes, &(const char **){ names });
	json_names(r, "nodes", names);
	record__object_end(r);
	free(names);
}

static void json_aliases(struct record *r, const struct topo_graph *g)
{
	record__array_begin(r, "aliases");
	for (size_t i = 0; i < g->aliases.n; i++) {
		const struct alias *a =
			(const struct alias *)table__at(&g->aliases, i);

		record__object_begin(r, NULL);
		record__str(r, "addr", a->k.key);
		record__str(r, "service", a->service);
		record__bool(r, "ambiguous", a->ambiguous);
		record__object_end(r);
	}
	record__array_end(r);
}

bool topo__partial_fields(const struct topo_graph *g, struct record *r,
			  size_t *edge, size_t max_len)
{
	const char **names = xrealloc(NULL, (g->nodes.n + 1) * sizeof(*names));
	size_t first = *edge;
	bool head = first == 0;

	/* the graph's own fields in the first part, empty in the others */
	record__u64(r, "records", head ? g->records : 0);
	record__u64(r, "rejected", head ? g->rejected : 0);
	if (head) {
		names_of(&g->nodes, &(const char **){ names });
		json_names(r, "nodes", names);
		json_aliases(r, g);
	} else {
		json_names(r, "nodes", &(const char *){ NULL });
		record__array_begin(r, "aliases");
		record__array_end(r);
	}
	free(names);
	record__array_begin(r, "edges");
	/* one edge at least, whatever max_len */
	for (; *edge < g->raw.n && (r->json.len < max_len || *edge == first);
	     (*edge)++)
		json_raw_edge(r, (const struct raw_edge *)table__at(&g->raw,
								    *edge));
	record__array_end(r);
	return *edge == g->raw.n;
}

/* The unsigned integer name of v, 0 when absent; false when not one. */
static bool get_u64(const struct json_value *v, const char *name, uint64_t *out)
{
	const struct json_value *f = json__get(v, name);

	*out = 0;
	return !f || json__u64(f, out);
}

static int read_hist(const struct json_value *v, struct hist *h)
{
	const struct json_value *b = json__get(v, "buckets");

	hist__reset(h);
	if (!get_u64(v, "count", &h->count) || !get_u64(v, "sum", &h->sum) ||
	    !get_u64(v, "min", &h->min) || !get_u64(v, "max", &h->max) || !b ||
	    b->type != JSON_OBJECT)
		return -1;
	for (size_t i = 0; i < b->obj.n; i++) {
		char *end;
		unsigned long idx = strtoul(b->obj.members[i].key, &end, 10);
		uint64_t n;

		if (*end || idx >= HIST_BUCKETS ||
		    !json__u64(&b->obj.members[i].value, &n))
			return -1;
		h->buckets[idx] = n;
	}
	return 0;
}

static int read_names(const struct json_value *v, struct table *t)
{
	if (!v || v->type != JSON_ARRAY)
		return -1;
	for (size_t i = 0; i < v->arr.n; i++) {
		const char *s = json__str(&v->arr.items[i]);

		if (!s)
			return -1;
		table__add_name(t, s);
	}
	return 0;
}

/* The raw edge e of a partial, added to g's raw edge of the same key. */
static int add_raw_edge(struct topo_graph *g, const struct json_value *e)
{
	struct topo_report r = { .node = "" };
	const char *side = json__str(json__get(e, "side"));
	const struct json_value *protos = json__get(e, "protocols");
	const struct json_value *lat = json__get(e, "lat");
	struct outcome_sum o = { 0 };
	struct raw_edge *raw, part = { 0 };

	r.src = json__str(json__get(e, "src"));
	r.dst = json__str(json__get(e, "dst"));
	if (!r.src || !r.dst || !side || !protos ||
	    protos->type != JSON_OBJECT ||
	    !get_u64(e, "reports", &part.reports) ||
	    !get_u64(e, "requests", &part.requests) ||
	    !get_u64(e, "bytes", &part.bytes) ||
	    !get_u64(e, "first_ts", &part.first_ts) ||
	    !get_u64(e, "last_ts", &part.last_ts) ||
	    !get_u64(e, "outcome_reports", &o.reports) ||
	    !get_u64(e, "outcomes", &o.outcomes) ||
	    !get_u64(e, "errors", &o.errors))
		return -1;
	for (int c = 0; c < TOPO_STATUS_CLASSES; c++) {
		char name[16];

		snprintf(name, sizeof(name), "status_%dxx", c + 1);
		if (!get_u64(e, name, &o.status[c]))
			return -1;
	}
	r.side = strcmp(side, "client") == 0 ? TOPO_CLIENT : TOPO_SERVER;
	raw = raw_edge__get(g, &r);
	if (!part.reports)
		return 0;
	span__add(&raw->first_ts, &raw->last_ts, raw->reports, part.first_ts,
		  part.last_ts);
	raw->reports += part.reports;
	raw->requests += part.requests;
	raw->bytes += part.bytes;
	outcomes__add(&raw->outcomes, &o);
	for (int p = 1; p < PROTO_NR; p++) {
		uint64_t n;

		if (!get_u64(protos, protocol__name(p), &n))
			return -1;
		raw->protos[p] += n;
	}
	if (lat) {
		struct hist h;

		if (read_hist(lat, &h))
			return -1;
		if (!raw->lat) {
			raw->lat = xrealloc(NULL, sizeof(*raw->lat));
			hist__reset(raw->lat);
		}
		hist__merge(raw->lat, &h);
	}
	return read_names(json__get(e, "nodes"), &raw->nodes);
}

int topo__add_partial(struct topo_graph *g, const struct json_value *v)
{
	const struct json_value *aliases = json__get(v, "aliases");
	const struct json_value *edges = json__get(v, "edges");
	uint64_t records, rejected;

	if (!get_u64(v, "records", &records) ||
	    !get_u64(v, "rejected", &rejected) || !aliases ||
	    aliases->type != JSON_ARRAY || !edges ||
	    edges->type != JSON_ARRAY ||
	    read_names(json__get(v, "nodes"), &g->nodes))
		return -1;
	g->records += records;
	g->rejected += rejected;
	for (size_t i = 0; i < aliases->arr.n; i++) {
		const struct json_value *a = &aliases->arr.items[i];
		const char *addr = json__str(json__get(a, "addr"));
		const char *service = json__str(json__get(a, "service"));
		bool ambiguous = false;

		if (!addr || !service ||
		    !json__bool(json__get(a, "ambiguous"), &ambiguous))
			return -1;
		alias__learn(g, addr, service);
		if (ambiguous)
			((struct alias *)table__find(&g->aliases, addr,
						     strlen(addr)))
				->ambiguous = true;
	}
	for (size_t i = 0; i < edges->arr.n; i++)
		if (add_raw_edge(g, &edges->arr.items[i]))
			return -1;
	return 0;
}
