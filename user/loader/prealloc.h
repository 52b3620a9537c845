/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Maps grown on demand (BPF_F_NO_PREALLOC) are safe only for tp_btf
 * programs (BPF_PROG_TYPE_TRACING). For the trace types (raw_tp,
 * tracepoint, kprobe, perf_event) the allocation could run inside a
 * tracepoint of the allocator itself: kernels before 6.1 warn about such
 * maps and PREEMPT_RT kernels refuse them. On those paths the maps are
 * preallocated instead, within a memory budget. */
#ifndef KMON_PREALLOC_H
#define KMON_PREALLOC_H

#include <stdint.h>

struct bpf_map;

/* Kernel memory one preallocated map may take. */
#define PREALLOC_BUDGET (32ULL << 20)

/* Before load: clears BPF_F_NO_PREALLOC on map and, when its entries
 * would take more than budget bytes, lowers max_entries to fit (logged). */
int prealloc__map(struct bpf_map *map, uint64_t budget);

#endif
