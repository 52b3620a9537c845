/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Writing the variables of a BPF program while it runs (its .bss or .data,
 * mapped into kmond). A plain store there is a store the compiler may drop
 * or merge: `on = 0; ns = x; on = 1;` compiles to two stores at -O2, and
 * the kernel would see a threshold half changed. */
#ifndef KMON_LIVE_STORE_H
#define KMON_LIVE_STORE_H

/* Stores val into var, which a running BPF program reads: a volatile
 * store the compiler must emit, fenced so it stays in program order with
 * the stores before and after it. */
#define live_store(var, val)                                 \
	do {                                                 \
		__atomic_thread_fence(__ATOMIC_RELEASE);     \
		*(volatile __typeof__(var) *)&(var) = (val); \
		__atomic_thread_fence(__ATOMIC_RELEASE);     \
	} while (0)

#endif
