/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The owners of the TCP sockets made before kmond, for the drop
 * collector, whose programs learn the others at connect() and listen():
 * a task_file iterator (bpf/drop_owners.bpf.c) walks every open file once
 * at start; where the kernel refuses it, the listen list and /proc give
 * the owners of the listeners (their accepted sockets are attributed to
 * them), and client sockets older than kmond stay without one. */
#ifndef KMON_DROP_OWNERS_H
#define KMON_DROP_OWNERS_H

#include "loader/probe.h"

struct provider;

/* The hook of the iterator, optional. */
/* clang-format off */
#define DROP_SEED_HOOK                                                      \
	{ "seed_owners",                                                    \
	  { { ATTACH_ITER, "drop_seed_owners", "task_file" } },             \
	  1, .optional = true,                                              \
	  .feature = "drops on client sockets made before kmond have no "   \
		     "owner (listeners' from /proc)" }
/* clang-format on */

/* Seeds the drop collector's maps sock_owner and port_owner (fds); what
 * the kernel side learned since its attach stays. */
void drop_owners__seed(const struct hook *hook, int sock_owner_fd,
		       int port_owner_fd, struct provider *p);

#endif
