/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Every shim for kernel-version drift lives here, each naming the change. */
#ifndef KMON_CORE_FIXES_BPF_H
#define KMON_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/* Whether the exiting task is the last of its thread group. Kernel 6.16
 * added a group_dead argument to sched_process_exit, but older kernels
 * do not pass it; signal->live is decremented before the tracepoint on
 * every kernel since 2.6, so read that instead. */
static __always_inline bool task_group_dead(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

#endif
