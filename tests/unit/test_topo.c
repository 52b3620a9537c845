// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmon-topo's merge rule: one request seen from both ends is one edge
 * counted once (the server's figures win), client-only edges use the
 * client's, replicas add up, addresses resolve to services, percentiles
 * merge by distribution; bad records are refused with a reason; the JSON
 * and DOT outputs say what the graph holds. */
#include <stdlib.h>
#include <string.h>

#include "consumers/common/percent.h"
#include "consumers/kmon-topo/coverage.h"
#include "consumers/kmon-topo/graph.h"
#include "lib/histogram.h"
#include "lib/json_parse.h"
#include "lib/record.h"
#include "lib/strbuf.h"
#include "unit.h"

static void add(struct topo_graph *g, const char *line)
{
	char err[256] = "";

	if (topo__add_json(g, line, strlen(line), err, sizeof(err)))
		fprintf(stderr, "  rejected %s: %s\n", line, err);
}

static const struct topo_edge *find(struct topo_graph *g, const char *src,
				    const char *dst, size_t *n)
{
	const struct topo_edge *e = topo__merge(g, n);

	for (size_t i = 0; i < *n; i++)
		if (strcmp(e[i].src, src) == 0 && strcmp(e[i].dst, dst) == 0)
			return &e[i];
	return NULL;
}

static bool near(uint64_t got, uint64_t want)
{
	/* the histogram's bucket error: within 1/32 of the value */
	return got >= want - want / 32 && got <= want + want / 32;
}

static int count_names(const char **list)
{
	int n = 0;

	while (list && list[n])
		n++;
	return n;
}

/* A -> B seen by the server's node and by the client's: one edge with
 * the server's figures, both nodes listed. */
static void test_both_ends(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	add(g,
	    "{\"kind\":\"topology\",\"ts\":100,\"node\":\"n2\",\"src\":\"A\","
	    "\"dst\":\"B\",\"requests\":10,\"bytes\":1000,"
	    "\"latency_p50_ns\":1000000,\"latency_p95_ns\":2000000,"
	    "\"latency_p99_ns\":4000000}");
	add(g, "{\"kind\":\"topology\",\"ts\":101,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"dst\":\"B\",\"requests\":11,"
	       "\"bytes\":1100,\"latency_p50_ns\":1500000,"
	       "\"latency_p95_ns\":2500000,\"latency_p99_ns\":4500000}");
	e = find(g, "A", "B", &n);
	CHECK(n == 1);
	CHECK(e != NULL);
	if (e) {
		CHECK(e->side == TOPO_SERVER);
		CHECK(e->requests == 10); /* not 21: the same requests */
		CHECK(e->bytes == 1000);
		CHECK(e->reports == 1);
		CHECK(e->first_ts == 100 && e->last_ts == 100);
		CHECK(near(e->p50, 1000000));
		CHECK(near(e->p95, 2000000));
		CHECK(near(e->p99, 4000000));
		CHECK(count_names(e->nodes[TOPO_SERVER]) == 1);
		CHECK_STR(e->nodes[TOPO_SERVER][0], "n2");
		CHECK(count_names(e->nodes[TOPO_CLIENT]) == 1);
		CHECK_STR(e->nodes[TOPO_CLIENT][0], "n1");
	}
	CHECK(topo__records(g) == 2);
	CHECK(topo__rejected(g) == 0);
	topo__free(g);
}

/* Only the client end is monitored: its figures, summed over its
 * intervals. */
static void test_client_only(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	add(g, "{\"kind\":\"topology\",\"ts\":5,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"dst\":\"db\",\"requests\":3,"
	       "\"bytes\":30,\"latency_p50_ns\":7000,\"latency_p95_ns\":7000,"
	       "\"latency_p99_ns\":7000}");
	add(g, "{\"kind\":\"topology\",\"ts\":3,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"dst\":\"db\",\"requests\":4,"
	       "\"bytes\":40,\"latency_p50_ns\":7000,\"latency_p95_ns\":7000,"
	       "\"latency_p99_ns\":7000}");
	e = find(g, "A", "db", &n);
	CHECK(n == 1 && e != NULL);
	if (e) {
		CHECK(e->side == TOPO_CLIENT);
		CHECK(e->requests == 7 && e->bytes == 70 && e->reports == 2);
		CHECK(e->first_ts == 3 && e->last_ts == 5);
		/* equal percentiles merge exactly */
		CHECK(e->p50 == 7000 && e->p95 == 7000 && e->p99 == 7000);
		CHECK(count_names(e->nodes[TOPO_SERVER]) == 0);
	}
	topo__free(g);
}

/* B runs on two monitored nodes: each saw its own requests. Records
 * without latency leave the percentiles to those with it. */
static void test_replicas(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":5,\"bytes\":50}");
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n3\",\"side\":"
	       "\"server\",\"src\":\"A\",\"dst\":\"B\",\"requests\":6,"
	       "\"bytes\":60,\"latency_p50_ns\":300,\"latency_p95_ns\":300,"
	       "\"latency_p99_ns\":300}");
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"dst\":\"B\",\"requests\":11,"
	       "\"bytes\":110}");
	e = find(g, "A", "B", &n);
	CHECK(n == 1 && e != NULL);
	if (e) {
		CHECK(e->side == TOPO_SERVER);
		CHECK(e->requests == 11 && e->bytes == 110);
		CHECK(e->p50 == 300 && e->p99 == 300);
		CHECK(count_names(e->nodes[TOPO_SERVER]) == 2);
		CHECK_STR(e->nodes[TOPO_SERVER][0], "n2");
		CHECK_STR(e->nodes[TOPO_SERVER][1], "n3");
	}
	topo__free(g);
}

/* Each edge carries the protocol of most of its requests, over the
 * nodes that reported it; names kmond does not give are not counted. */
static void test_protocol(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":5,\"protocol\":\"http\"}");
	add(g, "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n2\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":7,\"protocol\":\"http2\"}");
	add(g, "{\"kind\":\"topology\",\"ts\":3,\"node\":\"n1\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":4,\"protocol\":\"http\"}");
	add(g, "{\"kind\":\"topology\",\"ts\":3,\"node\":\"n1\",\"src\":\"A\","
	       "\"dst\":\"C\",\"requests\":4,\"protocol\":\"gopher\"}");
	e = find(g, "A", "B", &n);
	CHECK(e && e->protocol && !strcmp(e->protocol, "http"));
	e = find(g, "A", "C", &n);
	CHECK(e && !e->protocol);
	{
		struct strbuf dot = { 0 };

		topo__dot(g, &dot);
		CHECK(strstr(dot.buf, "\t\"B\" [label=\"B\\nhttp\"];\n") !=
		      NULL);
		CHECK(strstr(dot.buf, "\t\"C\";\n") != NULL);
		strbuf__free(&dot);
	}
	topo__free(g);
}

/* The server's node only knows the client's address, the client's node
 * only the server's: the addresses each end gives for its own service
 * join them into A -> B, whichever record came first. */
static void test_addresses(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":"
	       "\"10.0.0.1\",\"dst\":\"B\",\"dst_addr\":\"10.0.0.2:80\","
	       "\"requests\":9,\"bytes\":90}");
	e = find(g, "10.0.0.1", "B", &n);
	CHECK(n == 1 && e != NULL); /* nothing to resolve it with yet */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"src_addr\":\"10.0.0.1\",\"dst\":"
	       "\"10.0.0.2:80\",\"requests\":9,\"bytes\":90}");
	e = find(g, "A", "B", &n);
	CHECK(n == 1 && e != NULL);
	if (e) {
		CHECK(e->side == TOPO_SERVER);
		CHECK(e->requests == 9);
		CHECK(count_names(e->nodes[TOPO_CLIENT]) == 1);
	}

	/* A second service claims 10.0.0.1: it can no longer say who. */
	add(g, "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"C\",\"src_addr\":\"10.0.0.1\",\"dst\":"
	       "\"10.0.0.2:80\",\"requests\":1}");
	CHECK(find(g, "10.0.0.1", "B", &n) != NULL);
	CHECK(find(g, "A", "B", &n) != NULL); /* the client's own view */
	CHECK(find(g, "C", "B", &n) != NULL);
	CHECK(n == 3);
	topo__free(g);
}

/* Percentiles merge as distributions: a slow minority shows in the tail
 * as far as its share of requests reaches, not further. */
static void test_percentiles(void)
{
	struct topo_graph *g = topo__new();
	const struct topo_edge *e;
	size_t n;

	/* 1000 fast requests on n2, 10 slow ones (1%) on n3. */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":1000,\"latency_p50_ns\":1000000,"
	       "\"latency_p95_ns\":1000000,\"latency_p99_ns\":1000000}");
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n3\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":10,\"latency_p50_ns\":100000000,"
	       "\"latency_p95_ns\":100000000,\"latency_p99_ns\":100000000}");
	e = find(g, "A", "B", &n);
	CHECK(e && near(e->p50, 1000000) && near(e->p95, 1000000));
	CHECK(e && near(e->p99, 1000000)); /* 10 of 1010 is under 1% */
	/* 20 more slow ones: now 30 of 1030, about 3% */
	add(g, "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n3\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":20,\"latency_p50_ns\":100000000,"
	       "\"latency_p95_ns\":100000000,\"latency_p99_ns\":100000000}");
	e = find(g, "A", "B", &n);
	CHECK(e && near(e->p50, 1000000) && near(e->p95, 1000000));
	CHECK(e && near(e->p99, 100000000));
	topo__free(g);
}

static void test_rejects(void)
{
	static const struct {
		const char *json, *err;
	} cases[] = {
		{ "[1]", "col 1: expected an object, got '['" },
		{ "{\"kind\":\"tcp\",\"ts\":1,\"node\":\"n\"}",
		  "kind: \"tcp\", not topology" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"dst\":\"B\","
		  "\"requests\":1}",
		  "src: missing" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":null,"
		  "\"dst\":\"B\",\"requests\":1}",
		  "src: missing" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"\","
		  "\"dst\":\"B\",\"requests\":1}",
		  "src: expected a non-empty string, got \"\"" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"src\":\"A\",\"dst\":\"B\","
		  "\"requests\":1}",
		  "node: missing" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\"}",
		  "requests: missing" },
		{ "{\"kind\":\"topology\",\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1}",
		  "ts: missing" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":-1}",
		  "requests: expected an unsigned integer, got a negative integer" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1,\"bytes\":\"9\"}",
		  "bytes: expected an unsigned integer, got a string" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":7,\"requests\":1}",
		  "dst: expected a non-empty string, got an integer" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1,\"side\":\"middle\"}",
		  "side: \"middle\", expected server or client" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1,\"outcomes\":1}",
		  "errors: missing (outcomes and errors come together)" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1,\"outcomes\":1,\"errors\":true}",
		  "errors: expected an unsigned integer, got a boolean" },
		{ "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n\",\"src\":\"A\","
		  "\"dst\":\"B\",\"requests\":1,\"outcomes\":1,\"errors\":0,"
		  "\"status_5xx\":-2}",
		  "status_5xx: expected an unsigned integer, got a negative integer" },
		{ "{\"kind\":\"topology\",",
		  "col 20: expected a string key in an object, "
		  "got end of input" },
	};
	struct topo_graph *g = topo__new();
	char err[256];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		CHECK(topo__add_json(g, cases[i].json, strlen(cases[i].json),
				     err, sizeof(err)) == -1);
		CHECK_STR(err, cases[i].err);
	}
	CHECK(topo__rejected(g) == sizeof(cases) / sizeof(cases[0]));
	CHECK(topo__records(g) == 0);
	topo__merge(g, &n);
	CHECK(n == 0);
	topo__free(g);
}

/* Request outcomes: summed like requests, of the side whose figures the
 * edge takes (a client counts a 404 as an error, its server does not);
 * the rate only where kmond knew some outcomes; an edge from a kmond
 * before outcomes has none, in its struct, its JSON and its DOT. */
static void test_outcomes(void)
{
	struct topo_graph *g = topo__new();
	const struct json_value *edges, *ab, *cd, *cx, *ef;
	struct json_value *doc;
	struct json_error jerr;
	struct strbuf dot = { 0 };
	const struct topo_edge *e;
	struct record r;
	double rate;
	uint64_t u;
	size_t n;

	/* A -> B: two server replicas, and the client's own view */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":10,\"protocol\":\"http\","
	       "\"outcomes\":10,\"errors\":1,\"status_2xx\":8,"
	       "\"status_4xx\":1,\"status_5xx\":1}");
	add(g, "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n3\",\"src\":\"A\","
	       "\"dst\":\"B\",\"requests\":12,\"protocol\":\"http\","
	       "\"outcomes\":10,\"errors\":3,\"status_2xx\":7,"
	       "\"status_5xx\":3}");
	add(g, "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"A\",\"dst\":\"B\",\"requests\":22,"
	       "\"outcomes\":20,\"errors\":5,\"status_2xx\":15,"
	       "\"status_4xx\":1,\"status_5xx\":4}");
	/* C -> db: the client's figures, its server unmonitored */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"C\",\"dst\":\"db\",\"requests\":5,"
	       "\"protocol\":\"redis\",\"outcomes\":5,\"errors\":1}");
	/* C -> D: outcomes known for none of its requests (tls) */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"C\","
	       "\"dst\":\"D\",\"requests\":5,\"protocol\":\"tls\","
	       "\"outcomes\":0,\"errors\":0}");
	/* E -> F: an older kmond serves it, a newer one calls it */
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n4\",\"src\":\"E\","
	       "\"dst\":\"F\",\"requests\":6,\"latency_p50_ns\":2500000,"
	       "\"latency_p95_ns\":2500000,\"latency_p99_ns\":2500000}");
	add(g, "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"E\",\"dst\":\"F\",\"requests\":6,"
	       "\"outcomes\":6,\"errors\":6}");
	CHECK(topo__rejected(g) == 0);

	e = find(g, "A", "B", &n);
	CHECK(e && e->side == TOPO_SERVER && e->has_outcomes);
	CHECK(e && e->outcomes == 20 && e->errors == 4);
	CHECK(e && e->status[0] == 0 && e->status[1] == 15 &&
	      e->status[2] == 0 && e->status[3] == 1 && e->status[4] == 4);
	e = find(g, "C", "db", &n);
	CHECK(e && e->side == TOPO_CLIENT && e->outcomes == 5 &&
	      e->errors == 1);
	e = find(g, "E", "F", &n);
	CHECK(e && e->side == TOPO_SERVER && !e->has_outcomes &&
	      e->outcomes == 0 && e->errors == 0);

	record__init(&r);
	topo__json(g, 9, "host", &r);
	doc = json__parse(r.json.buf, r.json.len, &jerr);
	CHECK(doc != NULL);
	edges = doc ? json__get(doc, "edges") : NULL;
	CHECK(edges && edges->type == JSON_ARRAY && edges->arr.n == 4);
	if (!edges || edges->type != JSON_ARRAY || edges->arr.n != 4) {
		json__free(doc);
		record__free(&r);
		topo__free(g);
		return;
	}
	ab = &edges->arr.items[0];
	cd = &edges->arr.items[1];
	cx = &edges->arr.items[2];
	ef = &edges->arr.items[3];
	CHECK(json__u64(json__get(ab, "outcomes"), &u) && u == 20);
	CHECK(json__u64(json__get(ab, "errors"), &u) && u == 4);
	CHECK(json__double(json__get(ab, "error_rate"), &rate) && rate == 0.2);
	CHECK(json__u64(json__get(ab, "status_5xx"), &u) && u == 4);
	CHECK(json__u64(json__get(ab, "status_2xx"), &u) && u == 15);
	CHECK(!json__get(ab, "status_1xx") && !json__get(ab, "status_3xx"));
	CHECK_STR(json__str(json__get(cd, "dst")), "D");
	CHECK(json__u64(json__get(cd, "outcomes"), &u) && u == 0);
	CHECK(json__u64(json__get(cd, "errors"), &u) && u == 0);
	CHECK(!json__get(cd, "error_rate"));
	CHECK(json__double(json__get(cx, "error_rate"), &rate) && rate == 0.2);
	CHECK_STR(json__str(json__get(ef, "src")), "E");
	CHECK(!json__get(ef, "outcomes") && !json__get(ef, "errors") &&
	      !json__get(ef, "error_rate"));
	json__free(doc);
	record__free(&r);

	topo__dot(g, &dot);
	CHECK(strstr(dot.buf, "\t\"A\" -> \"B\" [label=\"22 req\\n20.0% "
			      "errors\", color=red, fontcolor=red];\n"));
	CHECK(strstr(dot.buf, "\t\"C\" -> \"D\" [label=\"5 req\"];\n"));
	CHECK(strstr(dot.buf, "\t\"C\" -> \"db\" [label=\"5 req\\n20.0% "
			      "errors\", color=red, fontcolor=red, "
			      "style=dashed];\n"));
	CHECK(strstr(dot.buf, "\t\"E\" -> \"F\" [label=\"6 req\\np95 2.5 "
			      "ms\"];\n"));
	strbuf__free(&dot);
	topo__free(g);
}

/* A few errors never read as 0.0%. */
static void test_percent(void)
{
	char buf[32];

	percent__format(buf, sizeof(buf), 0.2);
	CHECK_STR(buf, "20.0%");
	percent__format(buf, sizeof(buf), 1);
	CHECK_STR(buf, "100.0%");
	percent__format(buf, sizeof(buf), 0);
	CHECK_STR(buf, "0.0%");
	percent__format(buf, sizeof(buf), 0.001);
	CHECK_STR(buf, "0.1%");
	percent__format(buf, sizeof(buf), 0.00013);
	CHECK_STR(buf, "0.013%");
	percent__format(buf, sizeof(buf), 1e-7);
	CHECK_STR(buf, "<0.001%");
}

/* The snapshot record reads back with the parser; the DOT is exact. */
static void test_outputs(void)
{
	struct topo_graph *g = topo__new();
	struct strbuf dot = { 0 };
	const struct json_value *edges;
	struct json_value *doc;
	struct json_error jerr;
	struct record r;
	char err[256];
	uint64_t u;

	add(g, "{\"kind\":\"topology\",\"ts\":7,\"node\":\"n2\",\"src\":"
	       "\"we\\\"b\",\"dst\":\"api\",\"requests\":4,\"bytes\":8,"
	       "\"latency_p50_ns\":2500000,\"latency_p95_ns\":2500000,"
	       "\"latency_p99_ns\":2500000}");
	add(g, "{\"kind\":\"topology\",\"ts\":8,\"node\":\"n1\",\"side\":"
	       "\"client\",\"src\":\"api\",\"dst\":\"db\",\"requests\":2}");
	CHECK(topo__add_json(g, "not json", 8, err, sizeof(err)) == -1);

	record__init(&r);
	topo__json(g, 99, "host", &r);
	doc = json__parse(r.json.buf, r.json.len, &jerr);
	CHECK(doc != NULL);
	if (!doc)
		return;
	edges = json__get(doc, "edges");
	CHECK_STR(json__str(json__get(doc, "kind")), "topology_graph");
	CHECK(json__u64(json__get(doc, "ts"), &u) && u == 99);
	CHECK(json__u64(json__get(doc, "records"), &u) && u == 2);
	CHECK(json__u64(json__get(doc, "rejected"), &u) && u == 1);
	CHECK(json__get(doc, "nodes")->arr.n == 2);
	CHECK_STR(json__str(&json__get(doc, "nodes")->arr.items[1]), "n2");
	CHECK(edges && edges->type == JSON_ARRAY && edges->arr.n == 2);
	if (!edges || edges->type != JSON_ARRAY || edges->arr.n != 2)
		return;
	/* sorted by src: "api" first */
	CHECK_STR(json__str(json__get(&edges->arr.items[0], "src")), "api");
	CHECK_STR(json__str(json__get(&edges->arr.items[0], "side")), "client");
	CHECK_STR(json__str(json__get(&edges->arr.items[1], "src")), "we\"b");
	CHECK(json__u64(json__get(&edges->arr.items[1], "requests"), &u) &&
	      u == 4);
	CHECK(json__u64(json__get(&edges->arr.items[1], "latency_p95_ns"),
			&u) &&
	      u == 2500000);
	CHECK_STR(json__str(&json__get(&edges->arr.items[1], "server_nodes")
				     ->arr.items[0]),
		  "n2");
	CHECK(json__get(&edges->arr.items[1], "client_nodes")->arr.n == 0);
	json__free(doc);
	record__free(&r);

	topo__dot(g, &dot);
	CHECK_STR(dot.buf, "digraph kmon_topology {\n"
			   "\trankdir=LR;\n"
			   "\tnode [shape=box, style=rounded];\n"
			   "\t\"api\";\n"
			   "\t\"db\";\n"
			   "\t\"we\\\"b\";\n"
			   "\t\"api\" -> \"db\" [label=\"2 req\", "
			   "style=dashed];\n"
			   "\t\"we\\\"b\" -> \"api\" [label=\"4 req\\np95 "
			   "2.5 ms\"];\n"
			   "}\n");
	strbuf__free(&dot);
	topo__free(g);
	topo__free(NULL);
}

/* kmon-topo --fleet's deltas: records split into deltas of any size,
 * each written as partials (whole or an edge each) and read back, added
 * in any order, make the graph the records make in one: the same JSON,
 * byte for byte, even when the address claims that resolve an edge, or
 * make an address ambiguous, come in another delta than the edge. */
static const char *const delta_records[] = {
	"{\"kind\":\"topology\",\"ts\":5,\"node\":\"n2\",\"src\":"
	"\"10.0.0.1\",\"dst\":\"B\",\"dst_addr\":\"10.0.0.2:80\","
	"\"requests\":9,\"bytes\":90,\"latency_p50_ns\":1000,"
	"\"latency_p95_ns\":9000,\"latency_p99_ns\":70000,"
	"\"protocol\":\"http\",\"outcomes\":9,\"errors\":1,"
	"\"status_2xx\":8,\"status_5xx\":1}",
	"{\"kind\":\"topology\",\"ts\":3,\"node\":\"n3\",\"src\":"
	"\"10.0.0.1\",\"dst\":\"B\",\"requests\":4,\"bytes\":7,"
	"\"latency_p50_ns\":5000000,\"latency_p95_ns\":6000000,"
	"\"latency_p99_ns\":9000000,\"protocol\":\"redis\"}",
	"not json",
	"{\"kind\":\"topology\",\"ts\":9,\"node\":\"n1\",\"side\":"
	"\"client\",\"src\":\"A\",\"src_addr\":\"10.0.0.1\",\"dst\":"
	"\"10.0.0.2:80\",\"requests\":8,\"bytes\":80}",
	"{\"kind\":\"topology\",\"ts\":2,\"node\":\"n4\",\"side\":"
	"\"client\",\"src\":\"C\",\"dst\":\"203.0.113.9\","
	"\"requests\":3,\"latency_p50_ns\":40,\"latency_p95_ns\":50,"
	"\"latency_p99_ns\":60,\"outcomes\":3,\"errors\":0}",
	"{\"kind\":\"topology\",\"ts\":7,\"node\":\"n5\",\"src\":"
	"\"10.0.0.7\",\"dst\":\"D\",\"dst_addr\":\"10.0.0.9:5432\","
	"\"requests\":2,\"protocol\":\"postgresql\"}",
	"{\"kind\":\"topology\",\"ts\":8,\"node\":\"n6\",\"side\":"
	"\"client\",\"src\":\"E\",\"src_addr\":\"10.0.0.7\",\"dst\":"
	"\"10.0.0.9:5432\",\"requests\":2}",
	"{\"kind\":\"topology\",\"ts\":6,\"node\":\"n7\",\"side\":"
	"\"client\",\"src\":\"F\",\"src_addr\":\"10.0.0.7\",\"dst\":"
	"\"10.0.0.9:5432\",\"requests\":1}",
	"{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":"
	"\"10.0.0.1\",\"dst\":\"B\",\"dst_addr\":\"10.0.0.2:80\","
	"\"requests\":1,\"bytes\":3,\"latency_p50_ns\":1000,"
	"\"latency_p95_ns\":1000,\"latency_p99_ns\":1000,"
	"\"protocol\":\"http\",\"outcomes\":1,\"errors\":0,"
	"\"status_2xx\":1}",
};
#define DELTA_RECORDS (sizeof(delta_records) / sizeof(delta_records[0]))

/* Records from .. to-1 added, the one that is not JSON refused quietly. */
static void add_records(struct topo_graph *g, size_t from, size_t to)
{
	char err[256];

	for (size_t k = from; k < to && k < DELTA_RECORDS; k++)
		topo__add_json(g, delta_records[k], strlen(delta_records[k]),
			       err, sizeof(err));
}

static char *graph_json(struct topo_graph *g)
{
	struct record r;
	char *s;

	record__init(&r);
	topo__json(g, 1, "host", &r);
	s = strndup(r.json.buf, r.json.len);
	record__free(&r);
	return s;
}

/* The records in deltas of size records each, each delta in messages of
 * about part_bytes, added to a new graph last message first. */
static struct topo_graph *graph_of_deltas(size_t size, size_t part_bytes)
{
	struct record parts[4 * DELTA_RECORDS];
	struct topo_graph *merged = topo__new();
	size_t nparts = 0;

	for (size_t i = 0; i < DELTA_RECORDS; i += size) {
		struct topo_graph *delta = topo__new();
		size_t edge = 0;
		bool last;

		add_records(delta, i, i + size);
		do {
			record__init(&parts[nparts]);
			record__begin(&parts[nparts], "topology_partial", 1,
				      "m");
			last = topo__partial_fields(delta, &parts[nparts],
						    &edge, part_bytes);
			record__end(&parts[nparts++]);
		} while (!last);
		topo__free(delta);
	}
	while (nparts--) {
		struct json_error jerr;
		struct json_value *v = json__parse(
			parts[nparts].json.buf, parts[nparts].json.len, &jerr);

		CHECK(v && topo__add_partial(merged, v) == 0);
		json__free(v);
		record__free(&parts[nparts]);
	}
	return merged;
}

static void test_deltas(void)
{
	struct topo_graph *one = topo__new();
	char *want;

	add_records(one, 0, DELTA_RECORDS);
	want = graph_json(one);
	/* resolved and ambiguous addresses both show in the reference */
	CHECK(strstr(want, "\"src\":\"A\",\"dst\":\"B\"") != NULL);
	CHECK(strstr(want, "\"src\":\"10.0.0.7\",\"dst\":\"D\"") != NULL);
	for (size_t size = 1; size <= DELTA_RECORDS; size++) {
		/* whole, and one edge a message */
		for (size_t bytes = 1; bytes <= 1 << 20; bytes <<= 20) {
			struct topo_graph *g = graph_of_deltas(size, bytes);
			char *got = graph_json(g);

			CHECK_STR(got, want);
			free(got);
			topo__free(g);
		}
	}
	free(want);
	topo__free(one);
}

/* Offsets two deltas cover are counted, in whatever order they come;
 * deltas that only meet are not. */
static void test_coverage(void)
{
	struct topo_coverage *c = coverage__new();

	CHECK(coverage__add(c, 0, 100, 200) == 0);
	CHECK(coverage__add(c, 0, 300, 400) == 0);
	CHECK(coverage__add(c, 1, 100, 200) == 0); /* another partition */
	CHECK(coverage__add(c, 0, 200, 300) == 0); /* fills the gap */
	CHECK(coverage__add(c, 0, 0, 100) == 0);
	CHECK(coverage__add(c, 0, 350, 450) == 50); /* a successor's */
	CHECK(coverage__add(c, 0, 50, 60) == 10);
	CHECK(coverage__add(c, 0, 500, 600) == 0);
	CHECK(coverage__add(c, 0, 440, 520) == 30); /* spans a gap */
	CHECK(coverage__add(c, 0, 0, 600) == 600);
	CHECK(coverage__add(c, 0, 7, 7) == 0);
	CHECK(coverage__add(c, 1, 150, 250) == 50);
	CHECK(coverage__add(c, 1, 300, 310) == 0);
	coverage__free(c);
	coverage__free(NULL);
}

/* Every covered span once, over every partition (a checkpoint's
 * "covered"), and nothing past the last. */
static void test_coverage_spans(void)
{
	struct topo_coverage *c = coverage__new();
	int32_t partition;
	int64_t start, next, total = 0;
	size_t k;

	CHECK(!coverage__span(c, 0, &partition, &start, &next));
	coverage__add(c, 0, 0, 600);
	coverage__add(c, 1, 100, 250);
	coverage__add(c, 1, 300, 310);
	coverage__add(c, 5, 7, 9);
	for (k = 0; coverage__span(c, k, &partition, &start, &next); k++) {
		CHECK(next > start);
		CHECK(partition == 0 || partition == 1 || partition == 5);
		total += next - start;
	}
	CHECK(k == 4);
	CHECK(total == 600 + 150 + 10 + 2);
	CHECK(coverage__span(c, 1, &partition, &start, &next) &&
	      partition == 1 && start == 100 && next == 250);
	CHECK(coverage__span(c, 3, &partition, &start, &next) &&
	      partition == 5 && start == 7 && next == 9);
	CHECK(!coverage__span(c, 4, &partition, &start, &next));
	coverage__free(c);
}

int main(void)
{
	test_both_ends();
	test_client_only();
	test_replicas();
	test_protocol();
	test_addresses();
	test_percentiles();
	test_rejects();
	test_outputs();
	test_outcomes();
	test_percent();
	test_deltas();
	test_coverage();
	test_coverage_spans();
	return unit_done("topo");
}
