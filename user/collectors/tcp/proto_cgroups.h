/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where protocol identification's capture programs (bpf/tcp/proto.bpf.h) run:
 * in the cgroups (v2) of the monitored processes, not in the root (unless
 * every process is monitored: no services in the config).
 *
 * Why: a cgroup's skb program runs on every segment of every socket
 * under it. On the root, a connection between a monitored server and a
 * client no one monitors pays a run at both ends, and the host's other
 * traffic pays one per segment too. In the monitored processes' cgroups
 * only their own sockets' segments run it (a socket belongs to the cgroup
 * of the process that made it; an accepted one to its listener's).
 *
 * The set attached is the smallest one covering the cgroup of every
 * process in a service: a cgroup under one already attached gets nothing
 * more (the kernel runs the programs of every ancestor too). A process
 * that joins a service, or moves, gets its cgroup attached at once; once
 * per interval the set is made again from every process in a service,
 * and cgroups no one needs any more are detached. A connection older than
 * its cgroup's program stays unknown: the programs take only the first
 * bytes of a stream for its start. */
#ifndef KMON_PROTO_CGROUPS_H
#define KMON_PROTO_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_program;
struct provider;
struct proto_cgroups;

/* The programs to attach: ingress, and egress or NULL (where sends are
 * read at the send call). NULL when there is no cgroup v2 hierarchy. */
struct proto_cgroups *proto_cgroups__new(struct bpf_program *ingress,
					 struct bpf_program *egress);
void proto_cgroups__free(struct proto_cgroups *pc); /* NULL-safe: detach */
/* pid joined a service or moved: its cgroup gets the programs now unless
 * it is covered already. For provider__watch_selection. */
void proto_cgroups__add_pid(void *pc, uint32_t pid);
/* Makes the set again from every process in a service of p; with
 * every_process (a config without services), the root alone. */
void proto_cgroups__sync(struct proto_cgroups *pc, struct provider *p,
			 bool every_process);
/* Cgroups the programs are attached to now; attaches that failed. */
size_t proto_cgroups__attached(const struct proto_cgroups *pc);
uint64_t proto_cgroups__failures(const struct proto_cgroups *pc);

#endif
