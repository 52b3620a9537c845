/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The fleet-wide service graph: topology records from every kmond node
 * merged into one set of edges src -> dst.
 *
 * Merge rule (docs/consumers.md, "kmon-topo"):
 *  1. Every record is one node's view of one edge for one interval, seen
 *     from one end: "side" is "server" (the default: kmond's topology is
 *     built from server-side requests) or "client".
 *  2. Endpoints are service names. A record may also say which address an
 *     endpoint it names has ("src_addr", "dst_addr"); an endpoint written
 *     as that address by another node (the server end only knows a remote
 *     client's address) is then read as the service. An address claimed
 *     by two services stays an address.
 *  3. Edges are keyed by (src, dst) after that. Reports of one side are
 *     summed over nodes and intervals: two server nodes (replicas of B)
 *     saw different requests.
 *  4. The two sides are never added: each saw the same requests. An edge
 *     takes the server side's figures whenever any server-side report
 *     exists for it (that is where a request's latency is defined), and
 *     the client side's only when its server is not monitored.
 *  5. Percentiles cannot be merged exactly from percentiles. Each report
 *     is read as a distribution (50% of its requests at p50, 45% at p95,
 *     5% at p99) added, weighted by requests, to a log-linear histogram,
 *     whose percentiles are reported (within a few percent).
 *  6. Request outcomes (outcomes, errors, status_1xx..5xx) add up as
 *     requests do, of the same side; an edge none of whose reports (of
 *     that side) carried them, from a kmond before them, has none.
 */
#ifndef KMON_TOPO_GRAPH_H
#define KMON_TOPO_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"

/* HTTP status classes 1xx .. 5xx (status_1xx is [0]). */
#define TOPO_STATUS_CLASSES 5

struct json_value;
struct record;

enum topo_side {
	TOPO_SERVER,
	TOPO_CLIENT,
	TOPO_SIDES,
};

/* One topology record, as read from Kafka. Strings are borrowed. */
struct topo_report {
	const char *node;
	const char *src, *dst;
	const char *src_addr, *dst_addr; /* NULL when absent */
	enum topo_side side;
	uint64_t ts;
	uint64_t requests, bytes;
	uint64_t p50, p95, p99; /* ns; all 0 when the record has none */
	const char *protocol; /* the server's; NULL when absent */
	/* Request outcomes (docs/design/outcomes.md): has_outcomes when the
	 * record carries outcomes and errors; status classes 0 when absent. */
	bool has_outcomes;
	uint64_t outcomes, errors;
	uint64_t status[TOPO_STATUS_CLASSES];
};

/* One merged edge, as printed. */
struct topo_edge {
	const char *src, *dst;
	enum topo_side side; /* whose figures these are */
	uint64_t requests, bytes;
	uint64_t p50, p95, p99;
	uint64_t first_ts, last_ts;
	uint64_t reports; /* records merged into the chosen side */
	/* the protocol of most of its requests (of the chosen side), NULL
	 * when no report named one */
	const char *protocol;
	/* some report of the chosen side carried outcomes */
	bool has_outcomes;
	uint64_t outcomes, errors;
	uint64_t status[TOPO_STATUS_CLASSES];
	/* NULL-terminated node names that reported it, per side */
	const char **nodes[TOPO_SIDES];
};

struct topo_graph;

struct topo_graph *topo__new(void);
void topo__free(struct topo_graph *g); /* NULL-safe */

/* Reads one topology record, the JSON text json[0..len), in one pass
 * (report.c); its strings are decoded into strings (len + 1 bytes), which
 * out's borrow. Returns 0; or -1 with the reason in err for a record
 * that is not a valid topology record (counted as rejected). */
int topo__parse(const char *json, size_t len, struct topo_report *out,
		char *strings, char *err, size_t errlen);
void topo__add(struct topo_graph *g, const struct topo_report *r);
/* One Kafka message value: parse the JSON, check it, add it. Returns 0,
 * or -1 with the reason in err. */
int topo__add_json(struct topo_graph *g, const char *json, size_t len,
		   char *err, size_t errlen);

/* The merged edges, sorted by (src, dst). Valid until the next add or
 * merge; *n is their number. */
const struct topo_edge *topo__merge(struct topo_graph *g, size_t *n);

uint64_t topo__records(const struct topo_graph *g); /* added */
uint64_t topo__rejected(const struct topo_graph *g); /* refused */

/* The snapshot as one record (r->json, no newline):
 * {"kind":"topology_graph","ts":..,"node":..,"records":..,"rejected":..,
 *  "nodes":[..],"edges":[{"src":..,"dst":..,"side":..,...},..]}
 * node is the host kmon-topo runs on. */
void topo__json(struct topo_graph *g, uint64_t ts, const char *node,
		struct record *r);
/* kmon-topo --fleet: g's records as partial graphs, the fields of a
 * record the caller begins and ends: "records","rejected","nodes",
 * "aliases" (those of g in the part *edge 0 begins, empty in the others)
 * and "edges" (each before merging, its latency histogram's buckets as
 * they are) from *edge on, until r holds max_len bytes. *edge is then
 * where the next part begins; returns true when no edge is left. */
bool topo__partial_fields(const struct topo_graph *g, struct record *r,
			  size_t *edge, size_t max_len);
/* Adds a partial (those fields of v) to g: the same as adding the
 * records it was made of. Returns 0, or -1 for a malformed one (what was
 * read before the fault stays added). */
int topo__add_partial(struct topo_graph *g, const struct json_value *v);
/* The graph as Graphviz DOT. */
void topo__dot(struct topo_graph *g, struct strbuf *out);

#endif
