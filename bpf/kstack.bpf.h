/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel stacks kept in a hash map under a 64-bit hash of their frames.
 * A stack map keeps one stack per slot of a 32-bit hash and refuses a
 * second stack whose slot is taken: two stacks of a few could not both
 * be kept when their slots met, for as long as the program was loaded
 * (a program's own address is in its stacks, so whether they meet
 * changed from load to load). Two stacks sharing a 64-bit hash would
 * share a key: negligible. */
#ifndef KMON_KSTACK_BPF_H
#define KMON_KSTACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "kstack.h"

/* A map of stacks. Not preallocated: a kilobyte per entry, most never
 * used (user space preallocates it where the program type needs it, see
 * loader/prealloc.h). */
#define KSTACK_MAP(stacks, entries)                          \
	struct {                                             \
		__uint(type, BPF_MAP_TYPE_HASH);             \
		__uint(map_flags, BPF_F_NO_PREALLOC);        \
		__uint(max_entries, entries);                \
		__type(key, __u64); /* hash of the frames */ \
		__type(value, struct kstack);                \
	} stacks SEC(".maps")

/* A program's stacks, and the buffer one is walked into (too big for the
 * BPF stack). */
#define KSTACK_MAPS(stacks, scratch, entries)            \
	KSTACK_MAP(stacks, entries);                     \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);                  \
		__type(key, __u32);                      \
		__type(value, struct kstack);            \
	} scratch SEC(".maps")

/* Stores the walked stack (bytes long) in stacks under a hash of its
 * frames and returns that hash; 0 when there is none, *full set when
 * stacks had no room for it. */
static __always_inline __u64 kstack_put(void *stacks, struct kstack *ks,
					long bytes, bool *full)
{
	__u64 h = 0xcbf29ce484222325ULL;

	if (bytes <= 0)
		return 0;
	for (int i = 0; i < KSTACK_DEPTH && i * 8 < bytes; i++)
		h = (h ^ ks->ips[i]) * 0x100000001b3ULL;
	h ^= h >> 32;
	h = h ?: 1;
	if (bpf_map_lookup_elem(stacks, &h))
		return h;
	if (bpf_map_update_elem(stacks, &h, ks, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(stacks, &h)) {
		*full = true;
		return 0;
	}
	return h;
}

/* The kernel stack of the current task (task NULL) or of a task that is
 * not running, kept in stacks: its hash there, 0 when none (*full set
 * when stacks had no room). The buffer past the frames is zeroed by the
 * helpers. */
static __always_inline __u64 kstack_take(void *ctx, struct task_struct *task,
					 void *stacks, void *scratch,
					 bool *full)
{
	struct kstack *ks;
	__u32 zero = 0;
	long bytes;

	*full = false;
	ks = bpf_map_lookup_elem(scratch, &zero);
	if (!ks)
		return 0;
	if (task)
		bytes = bpf_get_task_stack(task, ks, sizeof(*ks), 0);
	else
		bytes = bpf_get_stack(ctx, ks, sizeof(*ks), 0);
	return kstack_put(stacks, ks, bytes, full);
}

#endif
