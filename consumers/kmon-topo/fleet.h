/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-topo --fleet: one member of a group that makes one graph in two
 * stages (docs/consumers.md, "kmon-topo as a group").
 *
 * Stage 1: the group shares the partitions of <prefix>topology. For
 * each partition it holds, a member sums what it reads into a partial
 * graph (graph.h), a "segment" of that partition from the offset it
 * started at, and writes it to <prefix><group>.topology_partial, keyed
 * by partition and start, at every snapshot and when the partition is
 * taken from it; only then does it commit the offsets the segment
 * covers, so the next owner's segment starts where this one ends.
 *
 * Stage 2: every member reads the whole partial topic (a group of its
 * own) and adds the last partial of every segment: the sum of every
 * partition, read once, is one member's graph. Offsets two segments
 * both cover (a member gone after writing its partial, before its
 * commit) are counted as read twice. */
#ifndef KMON_TOPO_FLEET_H
#define KMON_TOPO_FLEET_H

#include <stdint.h>

struct topo_graph;

struct topo_fleet_opts {
	const char *brokers, *prefix, *group;
	const char *host; /* "node" of the partials it writes */
	const char *const (*props)[2]; /* -X name=value */
	int nprops;
};

struct topo_fleet_counts {
	uint64_t partials_written, partials_read, partials_rejected;
	uint64_t segments; /* in the graph, over every member */
	uint64_t read_twice; /* offsets in more than one segment */
	uint64_t rebalances, produce_failed, commits_failed;
};

struct topo_fleet;

/* NULL with the reason printed. */
struct topo_fleet *topo_fleet__new(const struct topo_fleet_opts *o);
/* Reads both stages for up to timeout_ms. */
void topo_fleet__poll(struct topo_fleet *f, int timeout_ms);
/* Writes this member's segments, waits for them to be delivered, then
 * commits what they cover. Returns 0, or -1 when not delivered. */
int topo_fleet__publish(struct topo_fleet *f);
/* Leaves the group (its segments written and committed), then reads
 * the partial topic until it has been quiet for a second. */
void topo_fleet__leave(struct topo_fleet *f);
/* The graph of every segment read so far, to topo__free. */
struct topo_graph *topo_fleet__graph(struct topo_fleet *f);
const struct topo_fleet_counts *topo_fleet__counts(const struct topo_fleet *f);
void topo_fleet__free(struct topo_fleet *f); /* NULL-safe */

#endif
