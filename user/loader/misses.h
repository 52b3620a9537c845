/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Runs of a collector's programs the kernel skipped: events lost before
 * any program could count them. The kernel skips a program already
 * running on the CPU (the same one, nested), and a tracepoint, kprobe or
 * perf_event program on a CPU where bpf_prog_active is held: by another
 * such program, or by a bpf() map operation. */
#ifndef KMON_MISSES_H
#define KMON_MISSES_H

#include <stdint.h>

struct bpf_object;

/* The sum of recursion_misses (bpf_prog_info) over obj's loaded programs,
 * since they were loaded. The kernel counts them for fentry and fexit
 * since 5.12, for tp_btf and raw_tp since 6.1 (which skipped none
 * before), for tracepoint and kprobe programs since 6.7 (none counted
 * before: such runs go uncounted). A kprobe's own misses (the kprobe's
 * nmissed) are not among them. */
uint64_t misses__count(struct bpf_object *obj);

#endif
