/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finishes the last request of connections kept open and quiet (see
 * "quiet connections" in bpf/tcp.bpf.c): one iterator over where the
 * connection state lives, run before each report. */
#ifndef KMON_TCP_FLUSH_H
#define KMON_TCP_FLUSH_H

#include <stdint.h>

struct tcp_bpf;
struct bpf_link;

/* Before load: loads only the iterator over where the state lives, and
 * none on a kernel without it (the last requests then wait for the next
 * one or the close). */
void tcp_flush__select(struct tcp_bpf *skel);
/* After load: the iterator's link, NULL (said once) when unavailable. */
struct bpf_link *tcp_flush__attach(struct tcp_bpf *skel);
/* Finishes every request answered more than quiet_ns ago. */
void tcp_flush__run(struct bpf_link *link, struct tcp_bpf *skel,
		    uint64_t quiet_ns);

#endif
