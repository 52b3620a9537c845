/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A kernel stack as the programs keep it (kstack.bpf.h) and user space
 * reads it (sym/kstack.h). */
#ifndef KMON_BPF_KSTACK_H
#define KMON_BPF_KSTACK_H

#define KSTACK_DEPTH 127 /* PERF_MAX_STACK_DEPTH */

struct kstack {
	__u64 ips[KSTACK_DEPTH]; /* innermost first, 0-terminated */
};

#endif
