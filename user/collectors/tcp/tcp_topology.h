/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The service graph (`topology` and `tcp_hist` records). The kernel adds
 * every finished request to its edge (bpf/tcp/tcp.bpf.c): counts, bytes and
 * a latency histogram per CPU, cumulative. Each interval this reports
 * every edge's increase, with what user space knows better: requests of
 * connections decided after they closed, and requests the kernel could
 * not put on an edge. */
#ifndef KMON_TCP_TOPOLOGY_H
#define KMON_TCP_TOPOLOGY_H

#include <stdint.h>

struct kmond;
struct proto_track;
struct record;
struct tcp_edge;
struct tcp_edge_miss;
struct tcp_topology;

/* edges_fd: the kernel's edges map; rec: where records are built (the
 * collector's, one collect at a time). */
struct tcp_topology *tcp_topology__new(struct kmond *k, struct record *rec,
				       int edges_fd, int ncpus);
void tcp_topology__free(struct tcp_topology *t);

/* requests of edge e, counted undecided by the kernel, are of protocol
 * proto: they move at the next report. */
void tcp_topology__move(struct tcp_topology *t, const struct tcp_edge *e,
			int proto, uint64_t requests);
/* A request the kernel finished on an edge it could not make. */
/* A request of the edge whose outcome user space decided (struct
 * tcp_outcome_late): added at the next report. */
struct outcome;
void tcp_topology__outcome(struct tcp_topology *t, const struct tcp_edge *e,
			   const struct outcome *o);
void tcp_topology__missed(struct tcp_topology *t,
			  const struct tcp_edge_miss *m);
/* proto: NULL when protocols are not identified. */
void tcp_topology__report(struct tcp_topology *t, uint64_t ts,
			  struct proto_track *proto);

#endif
