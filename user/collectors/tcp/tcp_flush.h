/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finishes the last request of connections kept open and quiet (see
 * "quiet connections" in bpf/tcp/tcp.bpf.c) before each report: an iterator
 * over the states in the sockets where the kernel allows iterators, else
 * a program run over the states in the hash (BPF_PROG_TEST_RUN). */
#ifndef KMON_TCP_FLUSH_H
#define KMON_TCP_FLUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "loader/probe.h"

struct tcp_bpf;
struct bpf_link;

/* The hook of the flush, optional: its candidates in order. */
/* clang-format off */
#define TCP_FLUSH_HOOK                                                      \
	{ "flush",                                                          \
	  { { ATTACH_ITER, "tcp_flush_sockets", "bpf_sk_storage_map" },     \
	    { ATTACH_RUN, "tcp_flush_conns", "conns" } },                   \
	  2, .optional = true,                                              \
	  .feature = "the last request of a connection kept open waits "    \
		     "for its next request or its close" }
/* clang-format on */

/* Before load, after probe__select chose *chosen for hook: the iterator
 * walks only states in sockets, which need every hook on tp_btf
 * (all_btf); else the run over the hash. Returns whether the states live
 * in the sockets. */
bool tcp_flush__select(struct tcp_bpf *skel, const struct hook *hook,
		       int *chosen, bool all_btf);
/* After load: the iterator's link (NULL for the run). An iterator that
 * cannot be attached is noted as failed (probe__note_failure) and -errno
 * returned: the collector starts again without it. */
int tcp_flush__attach(struct tcp_bpf *skel, struct bpf_link **link);
/* Finishes every request answered more than quiet_ns ago. */
void tcp_flush__run(struct bpf_link *link, struct tcp_bpf *skel,
		    uint64_t quiet_ns);

#endif
