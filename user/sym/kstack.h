/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel stacks from the programs' maps, kept by hash (bpf/kstack.bpf.h),
 * as symbolized frames. */
#ifndef KMON_KSTACK_H
#define KMON_KSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* Stacks kept by hash, symbolized once each. */
struct kstacks;

struct kstacks *kstacks__new(void);
void kstacks__free(struct kstacks *t); /* NULL-safe */

/* The frames of the stack under hash h in map_fd (values struct kstack),
 * innermost first, without the BPF and tracing frames on top. NULL with
 * *n = 0 when h is 0 or not in the map. Valid until h is forgotten. */
const char *const *kstacks__frames(struct kstacks *t, const struct ksyms *ks,
				   int map_fd, uint64_t h, size_t *n);

/* Forgets h's frames: its stack left the map. */
void kstacks__forget(struct kstacks *t, uint64_t h);

/* Once an interval, after its records are out: when map_fd (of entries
 * entries) is three quarters full by the stacks asked for, or full is
 * set (the programs found no room), deletes the stacks no record asked
 * for in this interval or the last, and forgets them. Returns how many
 * went. A program may take a stack's hash just before it goes: its
 * record then has no stack (kstacks__frames gives NULL). */
size_t kstacks__sweep(struct kstacks *t, int map_fd, size_t entries, bool full);

#endif
