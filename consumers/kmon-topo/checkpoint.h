/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-topo --fleet's checkpoints (docs/consumers.md, "Checkpoints"):
 * the graph a member merged, with where it had read the partial topic
 * to and the offsets of the topology topic its deltas covered, written
 * to <prefix><group>.topology_checkpoint. A member that starts loads
 * the last whole checkpoint and merges only the deltas after it, so
 * the partial topic need keep only those: its retention bounds it, and
 * how much a member reads to start. */
#ifndef KMON_TOPO_CHECKPOINT_H
#define KMON_TOPO_CHECKPOINT_H

#include <stdint.h>

#include <librdkafka/rdkafka.h>

struct topo_graph;
struct topo_coverage;

/* What a checkpoint holds: the graph, the topology offsets its deltas
 * covered, and the next offset of each partition of the partial topic
 * (merged_next[0 .. nmerged); RD_KAFKA_OFFSET_BEGINNING for one not
 * read yet). */
struct topo_merged {
	struct topo_graph *graph;
	struct topo_coverage *covered;
	int64_t *merged_next;
	int nmerged;
};

/* Writes m to partition 0 of topic (a producer's) in messages of about
 * part_bytes, under id (unique to this writer and checkpoint), each with
 * msg_opaque for its delivery report. Returns the messages queued, -1
 * when one could not be. */
int checkpoint__write(rd_kafka_topic_t *topic, const char *host, const char *id,
		      const struct topo_merged *m, size_t part_bytes,
		      void *msg_opaque);

/* Reads partition 0 of topic with consumer (its assignment replaced)
 * to its end and adds the last whole checkpoint to m (empty: its graph
 * and coverage new, no merged_next). Returns 1 when one was loaded, 0
 * when there is none, -1 when the topic could not be read to its end
 * in timeout_ms (m unchanged). */
int checkpoint__load(rd_kafka_t *consumer, const char *topic,
		     struct topo_merged *m, int timeout_ms);

#endif
