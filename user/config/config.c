// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* YAML -> struct config. libyaml builds the document tree; each section
 * below walks its part of it and refuses anything unknown or ill-typed with
 * "file:line:col: message" pointing at the offending node. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml.h>

#include "config/config.h"
#include "config/kafka_property.h"
#include "lib/array.h"
#include "lib/duration.h"
#include "lib/hostport.h"
#include "lib/syscall_names.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_SEC 1000000000ULL
#define MIN_INTERVAL_NS (100 * NS_PER_MS)
#define MAX_INTERVAL_NS (3600 * NS_PER_SEC)
#define MAX_PID 4194304 /* PID_MAX_LIMIT on 64-bit */

struct parser {
	const char *name;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int fail_at(struct parser *p, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *p, yaml_mark_t mark, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%zu:%zu: ", p->name,
			 mark.line + 1, mark.column + 1);
	va_list ap;

	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

#define fail(p, node, ...) fail_at(p, (node)->start_mark, __VA_ARGS__)

static yaml_node_t *node_at(struct parser *p, yaml_node_item_t id)
{
	return yaml_document_get_node(p->doc, id);
}

static const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static int expect(struct parser *p, yaml_node_t *node, yaml_node_type_t type,
		  const char *what)
{
	if (node->type == type)
		return 0;
	return fail(p, node, "%s: expected %s, got %s", what,
		    type == YAML_MAPPING_NODE  ? "a mapping" :
		    type == YAML_SEQUENCE_NODE ? "a list" :
						 "a scalar",
		    node_kind(node));
}

static const char *scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

/* Strings are scalars; quoted or not, but a plain "null"/"~" is no string. */
static int get_string(struct parser *p, yaml_node_t *node, const char *what,
		      char *out, size_t outlen)
{
	if (expect(p, node, YAML_SCALAR_NODE, what))
		return -1;
	if (node->data.scalar.length == 0)
		return fail(p, node, "%s: must not be empty", what);
	if (node->data.scalar.length >= outlen)
		return fail(p, node, "%s: longer than %zu bytes", what,
			    outlen - 1);
	if (strlen(scalar(node)) != node->data.scalar.length)
		return fail(p, node, "%s: contains a NUL byte", what);
	memcpy(out, scalar(node), node->data.scalar.length + 1);
	return 0;
}

static int get_strdup(struct parser *p, yaml_node_t *node, const char *what,
		      char **out)
{
	char buf[4096];

	if (get_string(p, node, what, buf, sizeof(buf)))
		return -1;
	free(*out);
	*out = strdup(buf);
	return 0;
}

static int get_bool(struct parser *p, yaml_node_t *node, const char *what,
		    bool *out)
{
	if (expect(p, node, YAML_SCALAR_NODE, what))
		return -1;
	if (strcmp(scalar(node), "true") == 0) {
		*out = true;
	} else if (strcmp(scalar(node), "false") == 0) {
		*out = false;
	} else {
		return fail(p, node, "%s: expected true or false, got '%s'",
			    what, scalar(node));
	}
	return 0;
}

/* A switch on by default, kept as its negation (so a zeroed config has
 * it on): *off is !value. */
static int get_off(struct parser *p, yaml_node_t *node, const char *what,
		   bool *off)
{
	bool on;

	if (get_bool(p, node, what, &on))
		return -1;
	*off = !on;
	return 0;
}

static int get_uint(struct parser *p, yaml_node_t *node, const char *what,
		    uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long v;

	if (expect(p, node, YAML_SCALAR_NODE, what))
		return -1;
	s = scalar(node);
	if (!isdigit((unsigned char)s[0]))
		return fail(p, node, "%s: expected a whole number, got '%s'",
			    what, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return fail(p, node, "%s: expected a whole number, got '%s'",
			    what, s);
	if (errno || v < min || v > max)
		return fail(p, node, "%s: %s is out of range (%llu to %llu)",
			    what, s, (unsigned long long)min,
			    (unsigned long long)max);
	*out = v;
	return 0;
}

static int get_duration(struct parser *p, yaml_node_t *node, const char *what,
			uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t ns;

	if (expect(p, node, YAML_SCALAR_NODE, what))
		return -1;
	if (duration__parse(scalar(node), DURATION_UNIT, &ns))
		return fail(
			p, node,
			"%s: '%s' is not a duration (like 250us, 10ms, 5s, 1m)",
			what, scalar(node));
	if (ns < min || ns > max)
		return fail(p, node, "%s: %s is out of range", what,
			    scalar(node));
	*out = ns;
	return 0;
}

/* Walks a mapping: calls fn for each key with its value node, after
 * refusing non-scalar and duplicate keys. */
typedef int (*pair_fn)(struct parser *p, const char *key, yaml_node_t *knode,
		       yaml_node_t *val, void *arg);

static int for_each_pair(struct parser *p, yaml_node_t *map, const char *what,
			 pair_fn fn, void *arg)
{
	yaml_node_pair_t *pair, *prev;

	if (expect(p, map, YAML_MAPPING_NODE, what))
		return -1;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(p, pair->key);

		if (expect(p, k, YAML_SCALAR_NODE, "key"))
			return -1;
		for (prev = map->data.mapping.pairs.start; prev < pair; prev++)
			if (strcmp(scalar(node_at(p, prev->key)), scalar(k)) ==
			    0)
				return fail(p, k, "%s: duplicate key '%s'",
					    what, scalar(k));
		if (fn(p, scalar(k), k, node_at(p, pair->value), arg))
			return -1;
	}
	return 0;
}

static int unknown_key(struct parser *p, yaml_node_t *k, const char *what)
{
	return fail(p, k, "%s: unknown key '%s'", what, scalar(k));
}

/* --- services --- */

static bool container_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n < 12 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)id[i]))
			return false;
	return true;
}

/* k8s: { namespace: NS, pod: GLOB }: either may be left out. */
static int k8s_pair(struct parser *p, const char *key, yaml_node_t *k,
		    yaml_node_t *v, void *arg)
{
	struct service_cfg *svc = arg;

	if (strcmp(key, "namespace") == 0)
		return get_string(p, v, "match.k8s.namespace", svc->k8s_ns,
				  sizeof(svc->k8s_ns));
	if (strcmp(key, "pod") == 0)
		return get_string(p, v, "match.k8s.pod", svc->path,
				  sizeof(svc->path));
	return unknown_key(p, k, "match.k8s");
}

struct match_arg {
	struct service_cfg *svc;
	int nselectors;
};

static int match_pair(struct parser *p, const char *key, yaml_node_t *k,
		      yaml_node_t *v, void *arg)
{
	struct match_arg *m = arg;
	uint64_t pid;

	if (++m->nselectors > 1)
		return fail(p, k,
			    "match: give one selector per service entry "
			    "(add another entry with the same name)");
	if (strcmp(key, "comm") == 0) {
		m->svc->type = SELECTOR_COMM;
		return get_string(p, v, "match.comm", m->svc->comm,
				  sizeof(m->svc->comm));
	}
	if (strcmp(key, "pid") == 0) {
		m->svc->type = SELECTOR_PID;
		if (get_uint(p, v, "match.pid", 1, MAX_PID, &pid))
			return -1;
		m->svc->pid = (uint32_t)pid;
		return 0;
	}
	if (strcmp(key, "port") == 0) {
		m->svc->type = SELECTOR_PORT;
		if (get_uint(p, v, "match.port", 1, 65535, &pid))
			return -1;
		m->svc->port = (uint16_t)pid;
		return 0;
	}
	if (strcmp(key, "exe") == 0) {
		m->svc->type = SELECTOR_EXE;
		return get_string(p, v, "match.exe", m->svc->path,
				  sizeof(m->svc->path));
	}
	if (strcmp(key, "cgroup") == 0) {
		m->svc->type = SELECTOR_CGROUP;
		if (get_string(p, v, "match.cgroup", m->svc->path,
			       sizeof(m->svc->path)))
			return -1;
		if (m->svc->path[0] != '/')
			return fail(p, v,
				    "match.cgroup: a path starting with '/'");
		return 0;
	}
	if (strcmp(key, "container") == 0) {
		m->svc->type = SELECTOR_CONTAINER;
		if (get_string(p, v, "match.container", m->svc->path,
			       sizeof(m->svc->path)))
			return -1;
		if (!container_id_ok(m->svc->path))
			return fail(p, v,
				    "match.container: 12 to 64 hex digits");
		return 0;
	}
	if (strcmp(key, "k8s") == 0) {
		struct service_cfg *svc = m->svc;

		svc->type = SELECTOR_K8S;
		if (for_each_pair(p, v, "match.k8s", k8s_pair, svc))
			return -1;
		if (!svc->k8s_ns[0] && !svc->path[0])
			return fail(p, v, "match.k8s: needs namespace or pod");
		return 0;
	}
	return unknown_key(p, k, "match");
}

static int service_name_ok(const char *name)
{
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			return 0;
	return 1;
}

struct service_arg {
	struct service_cfg *svc;
	bool has_name, has_match;
};

static int service_pair(struct parser *p, const char *key, yaml_node_t *k,
			yaml_node_t *v, void *arg)
{
	struct service_arg *s = arg;

	if (strcmp(key, "name") == 0) {
		if (get_string(p, v, "name", s->svc->name,
			       sizeof(s->svc->name)))
			return -1;
		if (!service_name_ok(s->svc->name))
			return fail(p, v,
				    "name: '%s' may hold only letters, "
				    "digits, '_', '.' and '-'",
				    s->svc->name);
		s->has_name = true;
		return 0;
	}
	if (strcmp(key, "name_from_label") == 0)
		return get_string(p, v, "name_from_label", s->svc->name_label,
				  sizeof(s->svc->name_label));
	if (strcmp(key, "match") == 0) {
		struct match_arg m = { .svc = s->svc };

		if (for_each_pair(p, v, "match", match_pair, &m))
			return -1;
		if (m.nselectors == 0)
			return fail(
				p, v,
				"match: needs a selector (comm, pid, exe, cgroup, container, k8s or port)");
		s->has_match = true;
		return 0;
	}
	if (strcmp(key, "client") == 0)
		return get_off(p, v, "client", &s->svc->no_client);
	return unknown_key(p, k, "service");
}

static int parse_services(struct parser *p, yaml_node_t *seq,
			  struct config *cfg)
{
	yaml_node_item_t *item;

	if (expect(p, seq, YAML_SEQUENCE_NODE, "services"))
		return -1;
	for (item = seq->data.sequence.items.start;
	     item < seq->data.sequence.items.top; item++) {
		yaml_node_t *node = node_at(p, *item);
		struct service_arg s;

		if (cfg->nservices == CONFIG_MAX_SERVICES)
			return fail(p, node, "services: more than %d entries",
				    CONFIG_MAX_SERVICES);
		s = (struct service_arg){
			.svc = &cfg->services[cfg->nservices]
		};
		if (for_each_pair(p, node, "service", service_pair, &s))
			return -1;
		if (!s.has_name)
			return fail(p, node, "service: missing key 'name'");
		if (!s.has_match)
			return fail(p, node, "service: missing key 'match'");
		cfg->nservices++;
	}
	return 0;
}

/* --- collectors --- */

static int parse_syscall_list(struct parser *p, yaml_node_t *seq,
			      struct syscall_cfg *sc)
{
	yaml_node_item_t *item;

	if (expect(p, seq, YAML_SEQUENCE_NODE, "syscalls"))
		return -1;
	for (item = seq->data.sequence.items.start;
	     item < seq->data.sequence.items.top; item++) {
		yaml_node_t *node = node_at(p, *item);
		int nr;

		if (expect(p, node, YAML_SCALAR_NODE, "syscalls"))
			return -1;
		nr = syscall_number(scalar(node));
		if (nr < 0)
			return fail(p, node, "syscalls: unknown syscall '%s'",
				    scalar(node));
		if (sc->nsyscalls == CONFIG_MAX_SYSCALLS)
			return fail(p, node, "syscalls: too many entries");
		sc->syscalls[sc->nsyscalls++] = nr;
	}
	return 0;
}

static int syscall_pair(struct parser *p, const char *key, yaml_node_t *k,
			yaml_node_t *v, void *arg)
{
	struct syscall_cfg *sc = arg;

	if (strcmp(key, "syscalls") == 0)
		return parse_syscall_list(p, v, sc);
	return unknown_key(p, k, "collectors.syscall");
}

static int drop_pair(struct parser *p, const char *key, yaml_node_t *k,
		     yaml_node_t *v, void *arg)
{
	struct drop_cfg *dc = arg;
	uint64_t n;

	if (strcmp(key, "samples") == 0) {
		if (get_uint(p, v, "samples", 0, 100000, &n))
			return -1;
		dc->samples = (uint32_t)n;
		return 0;
	}
	return unknown_key(p, k, "collectors.drop");
}

static int bio_pair(struct parser *p, const char *key, yaml_node_t *k,
		    yaml_node_t *v, void *arg)
{
	struct bio_cfg *bc = arg;

	if (strcmp(key, "slow") == 0) {
		bc->slow = true;
		return get_duration(p, v, "slow", 0, 3600 * NS_PER_SEC,
				    &bc->slow_ns);
	}
	return unknown_key(p, k, "collectors.bio");
}

/* Tracepoints are "category:name", functions a symbol name (".isra.0"
 * suffixes included); whether they exist is up to the running kernel,
 * checked when the collector applies the list. */
static bool event_name_ok(const char *s, bool tracepoint)
{
	const char *colon = strchr(s, ':');

	if (tracepoint &&
	    (!colon || colon == s || !colon[1] || strchr(colon + 1, ':')))
		return false;
	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' &&
		    !(tracepoint && c == colon) && !(!tracepoint && *c == '.'))
			return false;
	return true;
}

static int parse_event_list(struct parser *p, yaml_node_t *seq,
			    const char *what, bool tracepoint,
			    char (*out)[CONFIG_EVENT_MAX], int *n)
{
	yaml_node_item_t *item;

	if (expect(p, seq, YAML_SEQUENCE_NODE, what))
		return -1;
	for (item = seq->data.sequence.items.start;
	     item < seq->data.sequence.items.top; item++) {
		yaml_node_t *node = node_at(p, *item);

		if (*n == CONFIG_MAX_COUNTERS)
			return fail(p, node, "%s: more than %d entries", what,
				    CONFIG_MAX_COUNTERS);
		if (get_string(p, node, what, out[*n], CONFIG_EVENT_MAX))
			return -1;
		if (!event_name_ok(out[*n], tracepoint))
			return fail(p, node,
				    tracepoint ?
					    "%s: '%s' is not category:name" :
					    "%s: '%s' is not a function name",
				    what, out[*n]);
		for (int i = 0; i < *n; i++)
			if (strcmp(out[i], out[*n]) == 0)
				return fail(p, node, "%s: '%s' listed twice",
					    what, out[*n]);
		(*n)++;
	}
	return 0;
}

static int counters_pair(struct parser *p, const char *key, yaml_node_t *k,
			 yaml_node_t *v, void *arg)
{
	struct counters_cfg *cc = arg;

	if (strcmp(key, "tracepoints") == 0)
		return parse_event_list(p, v, "tracepoints", true,
					cc->tracepoints, &cc->ntracepoints);
	if (strcmp(key, "functions") == 0)
		return parse_event_list(p, v, "functions", false, cc->functions,
					&cc->nfunctions);
	return unknown_key(p, k, "collectors.counters");
}

static int offcpu_pair(struct parser *p, const char *key, yaml_node_t *k,
		       yaml_node_t *v, void *arg)
{
	struct offcpu_cfg *oc = arg;

	if (strcmp(key, "min_block") == 0)
		return get_duration(p, v, "min_block", 0, 3600 * NS_PER_SEC,
				    &oc->min_block_ns);
	if (strcmp(key, "state") == 0) {
		if (expect(p, v, YAML_SCALAR_NODE, "state"))
			return -1;
		if (strcmp(scalar(v), "sleep") == 0)
			oc->state = OFFCPU_SLEEP;
		else if (strcmp(scalar(v), "all") == 0)
			oc->state = OFFCPU_ALL;
		else
			return fail(p, v,
				    "state: expected sleep or all, got '%s'",
				    scalar(v));
		return 0;
	}
	return unknown_key(p, k, "collectors.offcpu");
}

/* requests: all | none | { slow: DURATION } | { sample: N } */
static int tcp_requests_pair(struct parser *p, const char *key, yaml_node_t *k,
			     yaml_node_t *v, void *arg)
{
	struct tcp_cfg *tc = arg;
	uint64_t n;

	if (tc->requests != TCP_RECORDS_ALL)
		return fail(p, k, "requests: give one of slow or sample");
	if (strcmp(key, "slow") == 0) {
		tc->requests = TCP_RECORDS_SLOW;
		return get_duration(p, v, "requests.slow", 0, 3600 * NS_PER_SEC,
				    &tc->slow_ns);
	}
	if (strcmp(key, "sample") == 0) {
		if (get_uint(p, v, "requests.sample", 1, 1000000000, &n))
			return -1;
		tc->requests = TCP_RECORDS_SAMPLE;
		tc->sample = (uint32_t)n;
		return 0;
	}
	return unknown_key(p, k, "requests");
}

static int parse_tcp_requests(struct parser *p, yaml_node_t *v,
			      struct tcp_cfg *tc)
{
	tc->requests = TCP_RECORDS_ALL;
	if (v->type == YAML_MAPPING_NODE) {
		if (for_each_pair(p, v, "requests", tcp_requests_pair, tc))
			return -1;
		if (tc->requests == TCP_RECORDS_ALL)
			return fail(p, v, "requests: give slow or sample");
		return 0;
	}
	if (expect(p, v, YAML_SCALAR_NODE, "requests"))
		return -1;
	if (strcmp(scalar(v), "all") == 0)
		return 0;
	if (strcmp(scalar(v), "none") == 0) {
		tc->requests = TCP_RECORDS_NONE;
		return 0;
	}
	return fail(p, v,
		    "requests: expected all, none, { slow: DURATION } "
		    "or { sample: N }, got '%s'",
		    scalar(v));
}

static int parse_tcp_nodes(struct parser *p, yaml_node_t *seq,
			   struct tcp_cfg *tc)
{
	yaml_node_item_t *item;

	if (expect(p, seq, YAML_SEQUENCE_NODE, "nodes"))
		return -1;
	for (item = seq->data.sequence.items.start;
	     item < seq->data.sequence.items.top; item++) {
		yaml_node_t *node = node_at(p, *item);

		if (expect(p, node, YAML_SCALAR_NODE, "nodes"))
			return -1;
		if (tc->nnodes == CONFIG_MAX_NODES)
			return fail(p, node, "nodes: more than %d entries",
				    CONFIG_MAX_NODES);
		if (cidr__parse(scalar(node), &tc->nodes[tc->nnodes]))
			return fail(p, node,
				    "nodes: '%s' is not an address "
				    "or address/prefix",
				    scalar(node));
		tc->nnodes++;
	}
	return 0;
}

/* endpoint: "ADDR:PORT" or "[V6]:PORT", a numeric address (the kernel
 * matches the calls' destination, not a name). */
static int occupancy_endpoint(struct parser *p, yaml_node_t *v,
			      struct occupancy_target_cfg *t)
{
	char host[HOSTPORT_HOST_MAX], port[8], why[128];

	if (get_string(p, v, "occupancy.endpoint", t->endpoint,
		       sizeof(t->endpoint)))
		return -1;
	if (hostport__parse(t->endpoint, host, sizeof(host), port, sizeof(port),
			    why, sizeof(why)))
		return fail(p, v, "occupancy.endpoint: %s", why);
	t->port = (uint16_t)atoi(port);
	if (inet_pton(AF_INET, host, t->addr) == 1)
		t->family = AF_INET;
	else if (inet_pton(AF_INET6, host, t->addr) == 1)
		t->family = AF_INET6;
	else
		return fail(p, v,
			    "occupancy.endpoint: '%s' is not a numeric "
			    "address",
			    host);
	return 0;
}

/* occupancy: [ { service: NAME | endpoint: ADDR:PORT, tiers: N,
 * window: DURATION, slide: REQUESTS } ] */
static int occupancy_pair(struct parser *p, const char *key, yaml_node_t *k,
			  yaml_node_t *v, void *arg)
{
	struct occupancy_target_cfg *t = arg;
	uint64_t n;

	if (strcmp(key, "service") == 0)
		return get_string(p, v, "occupancy.service", t->service,
				  sizeof(t->service));
	if (strcmp(key, "endpoint") == 0)
		return occupancy_endpoint(p, v, t);
	if (strcmp(key, "tiers") == 0) {
		if (get_uint(p, v, "occupancy.tiers", 1, CONFIG_MAX_TIERS, &n))
			return -1;
		t->tiers = (uint32_t)n;
		return 0;
	}
	if (strcmp(key, "window") == 0)
		return get_duration(p, v, "occupancy.window", MIN_INTERVAL_NS,
				    24 * 3600 * NS_PER_SEC, &t->window_ns);
	/* at least a fit's samples; at most what its steps may hold */
	if (strcmp(key, "slide") == 0) {
		if (get_uint(p, v, "occupancy.slide", CONFIG_MIN_SLIDE,
			     CONFIG_MAX_SLIDE, &n))
			return -1;
		t->slide = (uint32_t)n;
		return 0;
	}
	return unknown_key(p, k, "occupancy");
}

static int parse_occupancy(struct parser *p, yaml_node_t *seq,
			   struct tcp_cfg *tc)
{
	yaml_node_item_t *it;

	if (expect(p, seq, YAML_SEQUENCE_NODE, "occupancy"))
		return -1;
	tc->noccupancy = 0;
	for (it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *node = node_at(p, *it);
		struct occupancy_target_cfg *t = &tc->occupancy[tc->noccupancy];

		if (tc->noccupancy == CONFIG_MAX_OCC_TARGETS)
			return fail(p, node, "occupancy: more than %d targets",
				    CONFIG_MAX_OCC_TARGETS);
		memset(t, 0, sizeof(*t));
		t->tiers = 2;
		t->line = node->start_mark.line;
		t->col = node->start_mark.column;
		if (for_each_pair(p, node, "occupancy", occupancy_pair, t))
			return -1;
		if (!t->service[0] == !t->endpoint[0])
			return fail(p, node,
				    "occupancy: give the service or "
				    "the endpoint (one of them)");
		for (int i = 0; i < tc->noccupancy; i++) {
			const struct occupancy_target_cfg *o =
				&tc->occupancy[i];

			if (t->service[0] &&
			    strcmp(o->service, t->service) == 0)
				return fail(
					p, node,
					"occupancy: service '%s' given twice",
					t->service);
			if (t->endpoint[0] && o->family == t->family &&
			    o->port == t->port && !memcmp(o->addr, t->addr, 16))
				return fail(
					p, node,
					"occupancy: endpoint '%s' given twice",
					t->endpoint);
		}
		tc->noccupancy++;
	}
	return 0;
}

/* What only the whole file tells (sections come in any order): each
 * target is a service of the file (or an endpoint, with the client side
 * on), watched by the tcp collector, over a window of whole intervals. */
static int check_occupancy(struct parser *p, const struct config *cfg)
{
	for (int i = 0; i < cfg->tcp.noccupancy; i++) {
		const struct occupancy_target_cfg *t = &cfg->tcp.occupancy[i];
		yaml_mark_t at = { .line = t->line, .column = t->col };
		bool found = false;

		for (int s = 0; s < cfg->nservices; s++)
			found = found ||
				strcmp(cfg->services[s].name, t->service) == 0;
		found = found || t->endpoint[0];
		if (!cfg->tcp.sw.enabled)
			return fail_at(p, at,
				       "occupancy: the tcp collector "
				       "is not enabled");
		if (cfg->tcp.no_load)
			return fail_at(p, at,
				       "occupancy: needs the load "
				       "accounting, which load: false "
				       "turns off");
		if (t->endpoint[0] && cfg->tcp.no_client)
			return fail_at(p, at,
				       "occupancy: endpoint '%s' is seen "
				       "from the client side, which "
				       "client: false turns off",
				       t->endpoint);
		if (!found)
			return fail_at(p, at,
				       "occupancy: '%s' is not a "
				       "service of this file",
				       t->service);
		if (t->window_ns && (t->window_ns < cfg->interval_ns ||
				     t->window_ns % cfg->interval_ns))
			return fail_at(p, at,
				       "occupancy.window: not a whole "
				       "number of intervals");
	}
	return 0;
}

static int parse_routes(struct parser *p, yaml_node_t *v, struct tcp_cfg *tc)
{
	uint64_t n;

	if (get_uint(p, v, "collectors.tcp.routes", 1, CONFIG_MAX_ROUTES, &n))
		return -1;
	tc->routes = n;
	return 0;
}

static int tcp_pair(struct parser *p, const char *key, yaml_node_t *k,
		    yaml_node_t *v, void *arg)
{
	struct tcp_cfg *tc = arg;

	if (strcmp(key, "requests") == 0)
		return parse_tcp_requests(p, v, tc);
	if (strcmp(key, "nodes") == 0)
		return parse_tcp_nodes(p, v, tc);
	if (strcmp(key, "client") == 0)
		return get_off(p, v, "collectors.tcp.client", &tc->no_client);
	if (strcmp(key, "load") == 0)
		return get_off(p, v, "collectors.tcp.load", &tc->no_load);
	if (strcmp(key, "paths") == 0)
		return get_off(p, v, "collectors.tcp.paths", &tc->no_paths);
	if (strcmp(key, "outcomes") == 0)
		return get_off(p, v, "collectors.tcp.outcomes",
			       &tc->no_outcomes);
	if (strcmp(key, "routes") == 0)
		return parse_routes(p, v, tc);
	if (strcmp(key, "protocols") == 0)
		return get_bool(p, v, "protocols", &tc->protocols);
	if (strcmp(key, "tls") == 0)
		return get_bool(p, v, "tls", &tc->tls);
	if (strcmp(key, "occupancy") == 0)
		return parse_occupancy(p, v, tc);
	return unknown_key(p, k, "collectors.tcp");
}

static void drop_defaults(struct config *cfg)
{
	cfg->drop.samples = CONFIG_DROP_SAMPLES;
}

static void tcp_defaults(struct config *cfg)
{
	cfg->tcp.protocols = true;
	cfg->tcp.tls = true;
	cfg->tcp.routes = CONFIG_ROUTES;
}

static void offcpu_defaults(struct config *cfg)
{
	cfg->offcpu.min_block_ns = CONFIG_OFFCPU_MIN_BLOCK_NS;
}

/* The collectors' sections: adding a collector adds a line here. */
static const struct collector_section {
	const char *name;
	size_t offset; /* of its section in struct config */
	pair_fn pair; /* its own keys */
	void (*defaults)(struct config *cfg); /* NULL: all zero */
} collector_sections[] = {
	{ "syscall", offsetof(struct config, syscall), syscall_pair, NULL },
	{ "drop", offsetof(struct config, drop), drop_pair, drop_defaults },
	{ "tcp", offsetof(struct config, tcp), tcp_pair, tcp_defaults },
	{ "bio", offsetof(struct config, bio), bio_pair, NULL },
	{ "counters", offsetof(struct config, counters), counters_pair, NULL },
	{ "offcpu", offsetof(struct config, offcpu), offcpu_pair,
	  offcpu_defaults },
};

struct section_arg {
	const struct collector_section *sec;
	void *cfg; /* the section: struct collector_switch first */
};

static int section_pair(struct parser *p, const char *key, yaml_node_t *k,
			yaml_node_t *v, void *arg)
{
	struct section_arg *a = arg;
	struct collector_switch *sw = a->cfg;

	if (strcmp(key, "enabled") == 0)
		return get_bool(p, v, "enabled", &sw->enabled);
	if (strcmp(key, "required") == 0)
		return get_bool(p, v, "required", &sw->required);
	return a->sec->pair(p, key, k, v, a->cfg);
}

static int collectors_pair(struct parser *p, const char *key, yaml_node_t *k,
			   yaml_node_t *v, void *arg)
{
	struct config *cfg = arg;
	char what[64];

	for (size_t i = 0; i < ARRAY_SIZE(collector_sections); i++) {
		const struct collector_section *sec = &collector_sections[i];
		struct section_arg a = { sec, (char *)cfg + sec->offset };

		if (strcmp(key, sec->name) != 0)
			continue;
		/* Naming a collector switches it on unless it says otherwise. */
		((struct collector_switch *)a.cfg)->enabled = true;
		if (sec->defaults)
			sec->defaults(cfg);
		snprintf(what, sizeof(what), "collectors.%s", sec->name);
		return for_each_pair(p, v, what, section_pair, &a);
	}
	return fail(p, k, "collectors: unknown collector '%s'", key);
}

/* --- exporters --- */

static int kafka_property_pair(struct parser *p, const char *key,
			       yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct exporter_cfg *ex = arg;
	struct kafka_property *props;
	char why[256];
	char *value = NULL;

	(void)k;
	if (get_strdup(p, v, "properties", &value))
		return -1;
	if (kafka__check_property(key, value, why, sizeof(why))) {
		free(value);
		return fail(p, k, "properties: %s", why);
	}
	props = realloc(ex->props, (ex->nprops + 1) * sizeof(*props));
	if (!props) {
		free(value);
		return fail(p, k, "out of memory");
	}
	ex->props = props;
	ex->props[ex->nprops].key = strdup(key);
	ex->props[ex->nprops].value = value;
	ex->nprops++;
	return 0;
}

static int prometheus_pair(struct parser *p, const char *key, yaml_node_t *k,
			   yaml_node_t *v, struct exporter_cfg *ex)
{
	char host[HOSTPORT_HOST_MAX], port[8], why[128];

	if (strcmp(key, "listen") == 0) {
		if (get_strdup(p, v, "listen", &ex->listen))
			return -1;
		if (hostport__parse(ex->listen, host, sizeof(host), port,
				    sizeof(port), why, sizeof(why)))
			return fail(p, v, "listen: %s", why);
		return 0;
	}
	if (strcmp(key, "expire") == 0)
		return get_duration(p, v, "expire", NS_PER_SEC,
				    7 * 24 * 3600 * NS_PER_SEC, &ex->expire_ns);
	if (strcmp(key, "max_series") == 0)
		return get_uint(p, v, "max_series", 1, 10000000,
				&ex->max_series);
	return fail(p, k,
		    "exporter: unknown key '%s' for type prometheus "
		    "(listen, expire, max_series)",
		    key);
}

static int exporter_pair(struct parser *p, const char *key, yaml_node_t *k,
			 yaml_node_t *v, void *arg)
{
	struct exporter_cfg *ex = arg;
	bool kafka = ex->type == EXPORTER_KAFKA;
	char policy[16];

	if (strcmp(key, "type") == 0)
		return 0; /* read first, by parse_exporter */
	if (ex->type == EXPORTER_PROMETHEUS)
		return prometheus_pair(p, key, k, v, ex);
	if (!kafka && strcmp(key, "path") == 0)
		return get_strdup(p, v, "path", &ex->path);
	if (kafka && strcmp(key, "brokers") == 0)
		return get_strdup(p, v, "brokers", &ex->brokers);
	if (kafka && strcmp(key, "topic_prefix") == 0)
		return get_strdup(p, v, "topic_prefix", &ex->topic_prefix);
	if (kafka && strcmp(key, "properties") == 0)
		return for_each_pair(p, v, "properties", kafka_property_pair,
				     ex);
	if (kafka && strcmp(key, "queue_messages") == 0)
		return get_uint(p, v, "queue_messages", 1, 10000000,
				&ex->queue_messages);
	if (kafka && strcmp(key, "queue_bytes") == 0)
		return get_uint(p, v, "queue_bytes", 1024, 1ULL << 32,
				&ex->queue_bytes);
	if (kafka && strcmp(key, "flush_timeout") == 0)
		return get_duration(p, v, "flush_timeout", 0, 600 * NS_PER_SEC,
				    &ex->flush_timeout_ns);
	if (kafka && strcmp(key, "drop") == 0) {
		if (get_string(p, v, "drop", policy, sizeof(policy)))
			return -1;
		if (strcmp(policy, "oldest") == 0)
			ex->drop = DROP_OLDEST;
		else if (strcmp(policy, "newest") == 0)
			ex->drop = DROP_NEWEST;
		else
			return fail(p, v, "drop: expected oldest or newest");
		return 0;
	}
	if (kafka && strcmp(key, "tcp_key") == 0) {
		if (get_string(p, v, "tcp_key", policy, sizeof(policy)))
			return -1;
		if (strcmp(policy, "exchange") == 0)
			ex->tcp_key = KAFKA_TCP_KEY_EXCHANGE;
		else if (strcmp(policy, "service") == 0)
			ex->tcp_key = KAFKA_TCP_KEY_SERVICE;
		else
			return fail(p, v,
				    "tcp_key: expected exchange or service");
		return 0;
	}
	return fail(p, k, "exporter: unknown key '%s' for type %s", key,
		    kafka ? "kafka" : "file");
}

static yaml_node_t *map_get(struct parser *p, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(p, pair->key);

		if (k->type == YAML_SCALAR_NODE && strcmp(scalar(k), key) == 0)
			return node_at(p, pair->value);
	}
	return NULL;
}

static int parse_exporter(struct parser *p, yaml_node_t *node,
			  struct exporter_cfg *ex)
{
	yaml_node_t *type;
	char name[16];

	if (expect(p, node, YAML_MAPPING_NODE, "exporter"))
		return -1;
	type = map_get(p, node, "type");
	if (!type)
		return fail(p, node, "exporter: missing key 'type'");
	if (get_string(p, type, "type", name, sizeof(name)))
		return -1;
	if (strcmp(name, "file") == 0) {
		ex->type = EXPORTER_FILE;
	} else if (strcmp(name, "kafka") == 0) {
		ex->type = EXPORTER_KAFKA;
		ex->topic_prefix = strdup("kmon.");
		ex->queue_messages = 100000;
		ex->queue_bytes = 64ULL << 20;
		ex->drop = DROP_OLDEST;
		ex->flush_timeout_ns = 10 * NS_PER_SEC;
	} else if (strcmp(name, "prometheus") == 0) {
		ex->type = EXPORTER_PROMETHEUS;
		ex->listen = strdup(CONFIG_PROMETHEUS_LISTEN);
		ex->expire_ns = 600 * NS_PER_SEC;
		ex->max_series = 50000;
	} else {
		return fail(
			p, type,
			"type: unknown exporter '%s' (file, kafka, prometheus)",
			name);
	}
	if (for_each_pair(p, node, "exporter", exporter_pair, ex))
		return -1;
	if (ex->type == EXPORTER_FILE && !ex->path)
		return fail(p, node,
			    "exporter: file needs 'path' (\"-\" is stdout)");
	if (ex->type == EXPORTER_KAFKA && !ex->brokers)
		return fail(p, node, "exporter: kafka needs 'brokers'");
	return 0;
}

/* Whether the last exporter listens where an earlier one does. */
static bool same_listen(const struct config *cfg)
{
	const struct exporter_cfg *last = &cfg->exporters[cfg->nexporters - 1];

	for (int i = 0; last->listen && i < cfg->nexporters - 1; i++)
		if (cfg->exporters[i].listen &&
		    strcmp(cfg->exporters[i].listen, last->listen) == 0)
			return true;
	return false;
}

static int parse_exporters(struct parser *p, yaml_node_t *seq,
			   struct config *cfg)
{
	yaml_node_item_t *item;

	if (expect(p, seq, YAML_SEQUENCE_NODE, "exporters"))
		return -1;
	for (item = seq->data.sequence.items.start;
	     item < seq->data.sequence.items.top; item++) {
		yaml_node_t *node = node_at(p, *item);

		if (cfg->nexporters == CONFIG_MAX_EXPORTERS)
			return fail(p, node, "exporters: more than %d entries",
				    CONFIG_MAX_EXPORTERS);
		if (parse_exporter(p, node, &cfg->exporters[cfg->nexporters++]))
			return -1;
		if (same_listen(cfg))
			return fail(p, node,
				    "exporters: a second prometheus "
				    "exporter on %s",
				    cfg->exporters[cfg->nexporters - 1].listen);
	}
	return 0;
}

/* --- top level --- */

static int top_pair(struct parser *p, const char *key, yaml_node_t *k,
		    yaml_node_t *v, void *arg)
{
	struct config *cfg = arg;

	if (strcmp(key, "node") == 0)
		return get_string(p, v, "node", cfg->node, sizeof(cfg->node));
	if (strcmp(key, "interval") == 0)
		return get_duration(p, v, "interval", MIN_INTERVAL_NS,
				    MAX_INTERVAL_NS, &cfg->interval_ns);
	if (strcmp(key, "services") == 0)
		return parse_services(p, v, cfg);
	if (strcmp(key, "collectors") == 0)
		return for_each_pair(p, v, "collectors", collectors_pair, cfg);
	if (strcmp(key, "exporters") == 0)
		return parse_exporters(p, v, cfg);
	return fail(p, k,
		    "unknown key '%s' (node, interval, services, "
		    "collectors, exporters)",
		    key);
}

static void config__defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ns = NS_PER_SEC;
	if (gethostname(cfg->node, sizeof(cfg->node) - 1))
		snprintf(cfg->node, sizeof(cfg->node), "unknown");
}

static int parse_document(struct parser *p, struct config *cfg)
{
	yaml_node_t *root = yaml_document_get_root_node(p->doc);

	if (!root) {
		yaml_mark_t start = { 0 };

		return fail_at(p, start, "empty configuration");
	}
	if (for_each_pair(p, root, "configuration", top_pair, cfg) ||
	    check_occupancy(p, cfg))
		return -1;
	if (cfg->nexporters == 0) {
		cfg->exporters[0].type = EXPORTER_FILE;
		cfg->exporters[0].path = strdup("-");
		cfg->nexporters = 1;
	}
	return 0;
}

/* libyaml gives up where the input stops making sense, often the end of the
 * file; its context mark says where the unfinished construct began, which is
 * where the mistake usually is, so both are reported:
 * "4:1: did not find expected ',' or ']' (flow sequence started at 3:11)". */
static void yaml_fail(struct parser *p, const yaml_parser_t *yp)
{
	const char *problem = yp->problem ? yp->problem : "invalid YAML";
	const char *what = yp->context;

	if (!what) {
		fail_at(p, yp->problem_mark, "%s", problem);
		return;
	}
	/* "while parsing a flow sequence" -> "flow sequence" */
	if (!strncmp(what, "while ", 6)) {
		what += 6;
		what += strcspn(what, " ");
		what += strspn(what, " ");
		if (!strncmp(what, "a ", 2))
			what += 2;
		else if (!strncmp(what, "an ", 3))
			what += 3;
	}
	fail_at(p, yp->problem_mark, "%s (%s started at %zu:%zu)", problem,
		what, yp->context_mark.line + 1, yp->context_mark.column + 1);
}

int config__parse(struct config *cfg, const char *name, const char *text,
		  size_t len, char *err, size_t errlen)
{
	struct parser p = { .name = name, .err = err, .errlen = errlen };
	yaml_parser_t yp;
	yaml_document_t doc;
	int ret = -1;

	config__defaults(cfg);
	cfg->file = strdup(name);
	if (!yaml_parser_initialize(&yp)) {
		snprintf(err, errlen, "%s: cannot initialise the YAML parser",
			 name);
		return -1;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
	if (!yaml_parser_load(&yp, &doc)) {
		yaml_fail(&p, &yp);
		yaml_parser_delete(&yp);
		config__free(cfg);
		return -1;
	}
	p.doc = &doc;
	ret = parse_document(&p, cfg);
	yaml_document_delete(&doc);
	yaml_parser_delete(&yp);
	if (ret)
		config__free(cfg);
	return ret;
}

int config__load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (!f) {
		snprintf(err, errlen, "%s:1:1: cannot open: %s", path,
			 strerror(errno));
		return -1;
	}
	do {
		if (len + 4096 > cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 8192);

			if (!t) {
				free(text);
				fclose(f);
				snprintf(err, errlen, "%s:1:1: out of memory",
					 path);
				return -1;
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	ret = config__parse(cfg, path, text ? text : "", len, err, errlen);
	free(text);
	return ret;
}

static void exporter_cfg__free(struct exporter_cfg *ex)
{
	free(ex->path);
	free(ex->brokers);
	free(ex->topic_prefix);
	free(ex->listen);
	for (int i = 0; i < ex->nprops; i++) {
		free(ex->props[i].key);
		free(ex->props[i].value);
	}
	free(ex->props);
	memset(ex, 0, sizeof(*ex));
}

void config__free(struct config *cfg)
{
	if (!cfg)
		return;
	for (int i = 0; i < cfg->nexporters; i++)
		exporter_cfg__free(&cfg->exporters[i]);
	free(cfg->file);
	memset(cfg, 0, sizeof(*cfg));
}
