/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The submission stacks of slow I/Os, kept by hash (bpf/kstack.bpf.h). A
 * map of stacks fills up, and then every new one failed: bio keeps two
 * maps and uses them in turn. When starts lose stacks (map full), a sweep
 * empties the map not in use and switches to it; a slow I/O whose stack
 * was in a map emptied since it started has no stack (counted), never
 * another I/O's. */
#ifndef KMON_BIO_STACKS_H
#define KMON_BIO_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bio_bpf;
struct bio_slow_event;
struct ksyms;
struct bio_stacks;

/* Before load: sizes the maps (KMOND_TEST_BIO_STACKS=N: N entries, so a
 * test can fill them), preallocated when a program on them is no tp_btf
 * (loader/prealloc.h). Returns NULL with errno set when out of memory or
 * a map cannot be preallocated. */
struct bio_stacks *bio_stacks__new(struct bio_bpf *skel, bool prealloc);
void bio_stacks__free(struct bio_stacks *s); /* NULL-safe */
/* The frames of e's stack; NULL, *n = 0 when it has none or its map was
 * emptied since. Valid until the next call. */
const char *const *bio_stacks__frames(struct bio_stacks *s,
				      const struct ksyms *ks,
				      const struct bio_slow_event *e,
				      size_t *n);
/* Once per interval: lost is the kernel's count of starts without a
 * stack; when it grew, sweep. */
void bio_stacks__collect(struct bio_stacks *s, uint64_t lost);
/* Slow I/Os whose stack a sweep took. */
uint64_t bio_stacks__swept(const struct bio_stacks *s);

#endif
