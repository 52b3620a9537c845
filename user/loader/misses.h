/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Runs of a collector's programs the kernel skipped (a program already
 * running on the CPU, or, for tracepoint and kprobe programs, any BPF
 * program or bpf() map operation there): events lost before any program
 * could count them. */
#ifndef KMON_MISSES_H
#define KMON_MISSES_H

#include <stdint.h>

struct bpf_object;

/* The sum of recursion_misses (bpf_prog_info) over obj's loaded programs,
 * since they were loaded. The kernel keeps it for tracing programs
 * (tp_btf, raw_tp, fentry) since 5.12 and for tracepoint and kprobe
 * programs since 6.7; before that it is 0 and such runs go uncounted. */
uint64_t progs__missed(struct bpf_object *obj);

#endif
