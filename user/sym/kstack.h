/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel stacks from a BPF stack-trace map, as symbolized frames. */
#ifndef KMON_KSTACK_H
#define KMON_KSTACK_H

#include <stddef.h>

struct ksyms;
struct stack_cache;

/* The frames of stack id in the stack map map_fd (values of depth u64),
 * innermost first, without the BPF and tracing frames on top; symbolized
 * once per id, then served from cache. NULL with *n = 0 when id < 0 or is
 * not in the map. Valid until the next call. */
const char *const *kstack_frames(struct stack_cache *cache,
				 const struct ksyms *ks, int map_fd, int id,
				 size_t depth, size_t *n);

#endif
