/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-topo --fleet: one member of a group that makes one graph in two
 * stages (docs/consumers.md, "kmon-topo as a group").
 *
 * Stage 1: the group shares the partitions of <prefix>topology. A
 * member sums what it reads, from all its partitions, into one delta
 * (a partial graph, graph.h) and writes it to
 * <prefix><group>.topology_partial at every snapshot and when its
 * partitions are taken from it, with the offsets it covers (for each
 * partition, from where its last delta ended); once it is delivered the
 * member commits those offsets and starts an empty delta, so the next
 * owner of a partition starts where the last delta ends.
 *
 * Stage 2: every member reads the whole partial topic (a group of its
 * own) and adds every delta to its graph: sums, bucket counts and
 * address claims do not depend on order or grouping, so the sum of the
 * deltas is one member's graph. Offsets two deltas both cover (a member
 * gone after writing its delta, before its commit) are counted as read
 * twice. A member that starts begins from the last checkpoint
 * (checkpoint.h) and merges the deltas after it. */
#ifndef KMON_TOPO_FLEET_H
#define KMON_TOPO_FLEET_H

#include <stdbool.h>
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
	uint64_t offsets; /* in the graph, over every member */
	uint64_t read_twice; /* offsets in more than one delta */
	uint64_t rebalances, produce_failed, commits_failed;
	uint64_t catch_up_failed; /* partitions given at committed offsets */
	uint64_t checkpoints_written, checkpoint_loaded; /* loaded: 0 or 1 */
	uint64_t checkpoints_failed; /* not queued, or not delivered */
	uint64_t deltas_gone; /* partial offsets needed, no longer kept */
};

struct topo_fleet;

/* NULL with the reason printed. */
struct topo_fleet *topo_fleet__new(const struct topo_fleet_opts *o);
/* Reads both stages for up to timeout_ms. */
void topo_fleet__poll(struct topo_fleet *f, int timeout_ms);
/* Writes this member's delta, waits for it to be delivered, then
 * commits what it covers and starts the next. Returns 0, or -1 when not
 * delivered (the next delta holds this one's records too). */
int topo_fleet__publish(struct topo_fleet *f);
/* Writes the graph merged so far as a checkpoint (checkpoint.h), when
 * this member holds partition 0 of the topology topic (one member at a
 * time does) or is leaving (after topo_fleet__leave: what it merged last
 * is kept, should the whole group stop). Returns 0, or -1 when it could
 * not be queued. */
int topo_fleet__checkpoint(struct topo_fleet *f, bool leaving);
/* Leaves the group (its delta written and committed), then reads the
 * partial topic until it has been quiet for a second. */
void topo_fleet__leave(struct topo_fleet *f);
/* The graph of every delta read so far (the member's own, valid until
 * topo_fleet__free). */
struct topo_graph *topo_fleet__graph(struct topo_fleet *f);
const struct topo_fleet_counts *topo_fleet__counts(const struct topo_fleet *f);
void topo_fleet__free(struct topo_fleet *f); /* NULL-safe */

#endif
