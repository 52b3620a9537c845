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
size_t drop_frames_skip(const struct ksyms *ks, const uint64_t *ips, size_t n);

#endif
