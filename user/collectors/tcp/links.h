/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request paths on the user side (bpf/tcp/tcp_link.bpf.h has the kernel's):
 * the node's id prefix, the `id`, `trace`, `parent` and `link` fields of
 * tcp records, and the count of linked and unlinked calls per service
 * in the stats record. */
#ifndef KMON_LINKS_H
#define KMON_LINKS_H

#include <stdint.h>

struct provider;
struct record;
struct tcp_links_report;

/* Bits 40..63 of every id this kmond makes: a hash of the node name, the
 * boot id and this start (a restart must not reuse the last run's ids),
 * never zero. */
uint64_t tcp_links__prefix(const char *node);
/* Bits of a serial that name the CPU it was made on, for CPU numbers
 * below cpu_ids (map_cpu_id_bound()). */
uint32_t tcp_links__cpu_bits(int cpu_ids);

/* The trace a request starts when it has no parent: a function of its
 * id alone, so the children of a request (whose parent field names it)
 * get the same one with no state kept. */
void tcp_links__trace(uint64_t root, char out[33]);
/* Writes id, trace and, when linked, parent and link. */
void tcp_links__fields(struct record *r, uint64_t id, uint64_t parent,
		       uint32_t link);

struct tcp_links_report *tcp_links__new(int ncpus);
void tcp_links__free(struct tcp_links_report *l); /* NULL-safe */
/* Writes "linked", "unlinked" (this interval's calls of the node) and
 * "calls": { service: { linked, unlinked } } for the services that made
 * calls, into the collector's object of the stats record. fd: the
 * kernel's links map. */
void tcp_links__stats(struct tcp_links_report *l, int fd, struct provider *p,
		      struct record *r);

#endif
