/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel stacks taken from a BPF program start with the program itself
 * and the tracing code that called it; the event starts below them. */
#ifndef KMON_DROP_FRAMES_H
#define KMON_DROP_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* How many of the innermost frames of ips[0..n) are BPF programs or
 * tracing glue (bpf_trace_run*, perf_trace_*, ...), to be skipped. */
size_t drop_frames_skip(const struct ksyms *ks, const uint64_t *ips,
			size_t n);

struct stack_cache;

/* The frames of kernel stack id (< 0: none) read from the stack map at
 * map_fd (max_depth u64 each), innermost first and without the tracing
 * frames on top; symbolized once per id and kept in cache. NULL and *n 0
 * when there is no such stack. */
const char *const *kstack_frames(struct stack_cache *cache,
				 const struct ksyms *ks, int map_fd, int id,
				 size_t max_depth, size_t *n);

#endif
