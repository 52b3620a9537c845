// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* topology: topology records -> the service graph in Graphviz DOT, or SVG
 * through Graphviz's dot when -o names an .svg file.
 *
 * Records of many intervals merge per (src, dst) edge: requests and bytes
 * add up; percentiles of different intervals cannot be merged, so an edge
 * shows the highest per-interval p95 (the worst interval seen). Requests
 * per second divide by the time the records cover: from the first to the
 * last record timestamp plus one interval (--interval, or the smallest gap
 * between record timestamps, or 1 s when all share one timestamp).
 * Edges show requests/s and bytes/s; a node that serves shows the
 * protocol most requests to it had (records' optional "protocol").
 * Request outcomes add up as requests do: an edge whose records carry
 * them shows its error rate (errors / outcomes) and is red with any
 * error; one from a kmond before them looks as it always did. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "consumers/common/percent.h"
#include "lib/compare.h"
#include "view.h"

/* Record timestamps closer than this belong to one collection: kmond's
 * shortest interval is 100 ms, and records of one interval may be stamped
 * a little apart. */
#define SAME_INTERVAL_NS 50000000ULL
#define DEFAULT_INTERVAL_NS 1000000000ULL

#define MAX_PROTOS 16
#define ERROR_COLOR "#c01c28"

struct edge {
	char *src, *dst; /* NULL = unknown peer */
	uint64_t requests, bytes, records;
	uint64_t p50, p95, p99; /* highest per-interval value */
	bool has_outcomes; /* some record carried outcomes */
	uint64_t outcomes, errors;
	/* requests by protocol name (the first MAX_PROTOS names seen) */
	char *proto[MAX_PROTOS];
	uint64_t proto_requests[MAX_PROTOS];
};

struct topo {
	const struct view_opts *o;
	struct edge *edges;
	size_t n, cap;
	uint64_t *ts; /* every record's ts, for the interval estimate */
	size_t nts, cap_ts;
	uint64_t records;
};

static char *strdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static bool same_name(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static struct edge *topo__edge(struct topo *t, const char *src, const char *dst)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (same_name(t->edges[i].src, src) &&
		    same_name(t->edges[i].dst, dst))
			return &t->edges[i];
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->edges = xrealloc(t->edges, t->cap * sizeof(*t->edges));
	}
	t->edges[t->n] = (struct edge){ .src = strdup_or_null(src),
					.dst = strdup_or_null(dst) };
	return &t->edges[t->n++];
}

/* Counts requests under the record's protocol (when it names one). */
static void edge__protocol(struct edge *e, const char *proto, uint64_t requests)
{
	int i;

	if (!proto || !strcmp(proto, "unknown"))
		return;
	for (i = 0; i < MAX_PROTOS && e->proto[i]; i++)
		if (!strcmp(e->proto[i], proto))
			break;
	if (i == MAX_PROTOS)
		return;
	if (!e->proto[i])
		e->proto[i] = xstrdup(proto);
	e->proto_requests[i] += requests;
}

/* The protocol most requests to the node called name had, NULL when
 * none was named. */
static const char *node_protocol(const struct topo *t, const char *name)
{
	struct edge sum = { 0 }; /* its protocols over every edge into it */
	const char *best = NULL;
	uint64_t most = 0;

	for (size_t i = 0; name && i < t->n; i++) {
		const struct edge *e = &t->edges[i];

		if (!same_name(e->dst, name))
			continue;
		for (int k = 0; k < MAX_PROTOS && e->proto[k]; k++) {
			int q;

			for (q = 0; q < MAX_PROTOS && sum.proto[q]; q++)
				if (!strcmp(sum.proto[q], e->proto[k]))
					break;
			if (q == MAX_PROTOS)
				continue;
			sum.proto[q] = e->proto[k]; /* borrowed, not copied */
			sum.proto_requests[q] += e->proto_requests[k];
		}
	}
	for (int q = 0; q < MAX_PROTOS && sum.proto[q]; q++)
		if (sum.proto_requests[q] > most) {
			most = sum.proto_requests[q];
			best = sum.proto[q];
		}
	return best;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static int topo__record(const struct json_value *rec, const char *kind,
			const char *where, void *ctx)
{
	struct topo *t = ctx;
	struct view_opts o = *t->o;
	const char *src, *dst;
	uint64_t ts, requests, bytes, p50, p95, p99, outcomes, errors;
	struct edge *e;
	bool keep, has_outcomes;
	int ret;

	/* --service means "edges touching the service", checked below */
	o.service = NULL;
	ret = filter__check(&o, rec, kind, where, &keep);
	if (ret || !keep)
		return ret;
	if ((ret = field__str_or_null(rec, kind, where, "src", &src)) ||
	    (ret = field__str_or_null(rec, kind, where, "dst", &dst)) ||
	    (ret = field__u64(rec, kind, where, "requests", &requests)) ||
	    (ret = field__u64(rec, kind, where, "bytes", &bytes)) ||
	    (ret = field__u64(rec, kind, where, "latency_p50_ns", &p50)) ||
	    (ret = field__u64(rec, kind, where, "latency_p95_ns", &p95)) ||
	    (ret = field__u64(rec, kind, where, "latency_p99_ns", &p99)) ||
	    (ret = field__outcomes(rec, kind, where, &has_outcomes, &outcomes,
				   &errors)))
		return ret;
	if (t->o->service && !same_name(src, t->o->service) &&
	    !same_name(dst, t->o->service))
		return 0;
	json__u64(json__get(rec, "ts"), &ts);
	if (t->nts == t->cap_ts) {
		t->cap_ts = t->cap_ts ? t->cap_ts * 2 : 256;
		t->ts = xrealloc(t->ts, t->cap_ts * sizeof(*t->ts));
	}
	t->ts[t->nts++] = ts;
	t->records++;

	e = topo__edge(t, src, dst);
	edge__protocol(e, json__str(json__get(rec, "protocol")), requests);
	e->requests += requests;
	e->bytes += bytes;
	e->records++;
	e->has_outcomes |= has_outcomes;
	e->outcomes += outcomes;
	e->errors += errors;
	if (requests) {
		e->p50 = max_u64(e->p50, p50);
		e->p95 = max_u64(e->p95, p95);
		e->p99 = max_u64(e->p99, p99);
	}
	return 0;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	int c;

	/* unknown peers (NULL) sort last */
	if (!same_name(x->src, y->src))
		return !x->src ? 1 : !y->src ? -1 : strcmp(x->src, y->src);
	if (same_name(x->dst, y->dst))
		return 0;
	c = !x->dst ? 1 : !y->dst ? -1 : strcmp(x->dst, y->dst);
	return c;
}

/* The time the records cover, in ns. */
static uint64_t topo__span(struct topo *t, uint64_t *interval)
{
	uint64_t gap = 0, d;
	size_t i;

	qsort(t->ts, t->nts, sizeof(*t->ts), u64_compare);
	for (i = 1; i < t->nts; i++) {
		d = t->ts[i] - t->ts[i - 1];
		if (d >= SAME_INTERVAL_NS && (!gap || d < gap))
			gap = d;
	}
	*interval = t->o->interval_ns ? t->o->interval_ns :
		    gap		      ? gap :
					DEFAULT_INTERVAL_NS;
	return t->ts[t->nts - 1] - t->ts[0] + *interval;
}

/* A DOT double-quoted string: '"' and '\' escaped, control bytes as
 * spaces (a label's own line breaks are added as \n by the caller). */
static void dot__str(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf__addc(sb, '\\');
		strbuf__addc(sb, (unsigned char)*s < 0x20 ? ' ' : *s);
	}
}

/* Node ids are n0, n1, ... in order of first appearance in the sorted
 * edges, so any service name is safe: it only ever appears in a label. */
static int node_id(char **names, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (same_name(names[i], name))
			return (int)i;
	names[*n] = (char *)name;
	return (int)(*n)++;
}

/* Ends the tooltip: the edge's errors when its records carried outcomes,
 * then its colour (red with any error) and the counts as attributes
 * scripts can read. */
static void dot__outcomes(struct strbuf *sb, const struct edge *e)
{
	if (e->has_outcomes)
		strbuf__addf(sb, "; %llu errors of %llu known outcomes",
			     (unsigned long long)e->errors,
			     (unsigned long long)e->outcomes);
	strbuf__addc(sb, '"');
	if (e->errors)
		strbuf__addf(sb, ", color=\"%s\", fontcolor=\"%s\"",
			     ERROR_COLOR, ERROR_COLOR);
	if (e->has_outcomes)
		strbuf__addf(sb, ", outcomes=%llu, errors=%llu",
			     (unsigned long long)e->outcomes,
			     (unsigned long long)e->errors);
}

static void dot__render(struct topo *t, struct strbuf *sb)
{
	char **names = xrealloc(NULL, 2 * t->n * sizeof(*names));
	char from[32], to[32], buf[64], p50[32], p95[32], p99[32], bps[64];
	char pct[32];
	uint64_t interval, span = topo__span(t, &interval), max_req = 1;
	double secs = (double)span / 1e9;
	size_t nnames = 0, i;

	qsort(t->edges, t->n, sizeof(*t->edges), edge_cmp);
	for (i = 0; i < t->n; i++)
		max_req = max_u64(max_req, t->edges[i].requests);
	fmt__time(from, sizeof(from), t->ts[0], true);
	fmt__time(to, sizeof(to), t->ts[t->nts - 1], true);
	fmt__duration(buf, sizeof(buf), (double)span);

	strbuf__adds(
		sb,
		"digraph kmon {\n\tgraph [rankdir=LR, fontname=\"Helvetica\", "
		"labelloc=t, fontsize=16, label=\"");
	dot__str(sb, t->o->title ? t->o->title : "Service topology");
	strbuf__addf(sb, "\\n%s to %s UTC (%s, %llu records)\"];\n", from, to,
		     buf, (unsigned long long)t->records);
	strbuf__adds(sb, "\tnode [shape=box, style=\"rounded,filled\", "
			 "fillcolor=\"#e8f0fe\", color=\"#1a5fb4\", "
			 "fontname=\"Helvetica\"];\n"
			 "\tedge [fontname=\"Helvetica\", fontsize=10, "
			 "color=\"#555555\"];\n");
	for (i = 0; i < t->n; i++) {
		node_id(names, &nnames, t->edges[i].src);
		node_id(names, &nnames, t->edges[i].dst);
	}
	for (i = 0; i < nnames; i++) {
		const char *proto = node_protocol(t, names[i]);

		strbuf__addf(sb, "\tn%zu [label=\"", i);
		dot__str(sb, names[i] ? names[i] : "(unknown)");
		if (proto) {
			strbuf__adds(sb, "\\n");
			dot__str(sb, proto);
		}
		strbuf__addf(sb, "\"%s];\n",
			     names[i] ? "" : ", style=\"rounded,dashed\"");
	}
	/* the label's last, empty line lifts its text clear of the edge,
	 * which dot draws through the label's middle */
	for (i = 0; i < t->n; i++) {
		const struct edge *e = &t->edges[i];
		double rate = (double)e->requests / secs;

		fmt__duration(p50, sizeof(p50), (double)e->p50);
		fmt__duration(p95, sizeof(p95), (double)e->p95);
		fmt__duration(p99, sizeof(p99), (double)e->p99);
		fmt__count(buf, sizeof(buf),
			   rate < 10 ? round(rate * 100) / 100 :
				       round(rate * 10) / 10);
		fmt__count(bps, sizeof(bps), round((double)e->bytes / secs));
		strbuf__addf(sb,
			     "\tn%d -> n%d [label=\"%s req/s, %s B/s\\np95 %s",
			     node_id(names, &nnames, e->src),
			     node_id(names, &nnames, e->dst), buf, bps, p95);
		if (e->outcomes) {
			percent__format(pct, sizeof(pct),
					(double)e->errors /
						(double)e->outcomes);
			strbuf__addf(sb, "\\n%s errors", pct);
		}
		strbuf__addf(sb, "\\n \", penwidth=%.2f, tooltip=\"",
			     1 + 4 * log1p((double)e->requests) /
					     log1p((double)max_req));
		dot__str(sb, e->src ? e->src : "(unknown)");
		strbuf__adds(sb, " -> ");
		dot__str(sb, e->dst ? e->dst : "(unknown)");
		strbuf__addf(sb,
			     ": %llu requests, %llu bytes; p50 %s, p95 %s, "
			     "p99 %s (highest of %llu records)",
			     (unsigned long long)e->requests,
			     (unsigned long long)e->bytes, p50, p95, p99,
			     (unsigned long long)e->records);
		dot__outcomes(sb, e);
		strbuf__addf(sb, ", requests=%llu];\n",
			     (unsigned long long)e->requests);
	}
	strbuf__adds(sb, "}\n");
	free(names);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	const char *p, *e;

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p), p, prog);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/* dot -Tsvg reads the DOT on a pipe and writes a temporary file that is
 * renamed into place only when dot succeeded. */
static int dot__to_svg(const char *output, const struct strbuf *dot)
{
	char tmp[4096];
	int fds[2], status, err = 0;
	size_t off = 0;
	pid_t pid;

	if (!in_path("dot")) {
		view__error(output, "SVG needs Graphviz's dot (Debian package "
				    "graphviz), not found in PATH; -o FILE.dot "
				    "writes DOT");
		return VIEW_RUNTIME;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", output, (int)getpid());
	if (pipe2(fds, O_CLOEXEC)) {
		view__error(output, "pipe: %s", strerror(errno));
		return VIEW_RUNTIME;
	}
	pid = fork();
	if (pid < 0) {
		view__error(output, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return VIEW_RUNTIME;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		execlp("dot", "dot", "-Tsvg", "-o", tmp, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	while (off < dot->len) {
		ssize_t n = write(fds[1], dot->buf + off, dot->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		off += (size_t)n;
	}
	close(fds[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		view__error(output, "dot -Tsvg failed (%s)",
			    err		      ? strerror(err) :
			    WIFEXITED(status) ? "non-zero exit" :
						"killed");
		unlink(tmp);
		return VIEW_RUNTIME;
	}
	if (rename(tmp, output)) {
		view__error(output, "rename: %s", strerror(errno));
		unlink(tmp);
		return VIEW_RUNTIME;
	}
	return 0;
}

int topology__run(const struct view_opts *o)
{
	static const char *const kinds[] = { "topology", NULL };
	struct topo t = { .o = o };
	struct strbuf out = { 0 };
	size_t i;
	int ret;

	ret = input__read(o, kinds, topo__record, &t);
	if (ret)
		goto cleanup;
	if (!t.records) {
		view__error(input__name(o), "no topology records%s",
			    o->service || o->has_from || o->has_to ?
				    " match the filters" :
				    "");
		ret = VIEW_BAD_INPUT;
		goto cleanup;
	}
	dot__render(&t, &out);
	if (o->output && ends_with(o->output, ".svg"))
		ret = dot__to_svg(o->output, &out);
	else
		ret = output__write(o, &out);
cleanup:
	for (i = 0; i < t.n; i++) {
		free(t.edges[i].src);
		free(t.edges[i].dst);
		for (int k = 0; k < MAX_PROTOS; k++)
			free(t.edges[i].proto[k]);
	}
	free(t.edges);
	free(t.ts);
	strbuf__free(&out);
	return ret;
}
