/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The heap through kmond's start and its reloads. Loading BPF parses the
 * kernel's BTF (5 MiB here) once for each collector's probes and once for
 * each skeleton, each copy freed before the next. glibc gives a block that
 * large a mapping of its own and unmaps it at free, so each parse faulted
 * its pages in anew: on a host that pays dearly for page faults (this
 * project's, a paravirtualized guest) that was over half of kmond's
 * start-up (bench/startup.sh, every collector on: 2.73 s to ready, 1.22
 * with the heap held; docs/benchmarks.md). */
#ifndef KMON_HEAP_H
#define KMON_HEAP_H

/* Until heap__settle(): large blocks come from the heap, and what is
 * freed stays there for the next block to reuse. */
void heap__hold(void);
/* Gives the heap's free pages back to the kernel and trims it again
 * past a few MiB free, as glibc would. */
void heap__settle(void);

#endif
