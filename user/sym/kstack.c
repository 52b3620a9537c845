// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/kstack.h"
#include "lib/hashmap.h"
#include "lib/maps.h"
#include "lib/xalloc.h"
#include "sym/drop_frames.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"

/* ips[0..len) symbolized, without the BPF and tracing frames on top;
 * *n of them. NULL when out of memory. */
static char **format_frames(const struct ksyms *ks, const uint64_t *ips,
			    size_t len, size_t *n)
{
	char **out, buf[KSYM_NAME_MAX + 32];
	size_t top = drop_frames_skip(ks, ips, len);

	len -= top;
	*n = 0;
	out = calloc(len ? len : 1, sizeof(*out));
	for (size_t i = 0; out && i < len; i++) {
		ksyms__format(ks, ips[top + i], buf, sizeof(buf));
		out[i] = strdup(buf);
		if (!out[i])
			break;
		(*n)++;
	}
	return out;
}

static size_t depth_of(const uint64_t *ips, size_t depth)
{
	size_t len = 0;

	while (len < depth && ips[len])
		len++;
	return len;
}

/* --- stacks kept by hash --- */

/* A stack's frames, symbolized once. */
struct kstack_entry {
	size_t n;
	char **frames;
	uint64_t used; /* the tick it was last asked for in */
};

struct kstacks {
	struct hashmap *entries; /* hash -> struct kstack_entry * */
	uint64_t tick; /* sweeps so far */
};

struct kstacks *kstacks__new(void)
{
	struct kstacks *t = xcalloc(1, sizeof(*t));

	t->entries = hashmap__new();
	return t;
}

static void entry_free(void *p)
{
	struct kstack_entry *e = p;

	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->frames[i]);
	free(e->frames);
	free(e);
}

void kstacks__free(struct kstacks *t)
{
	if (!t)
		return;
	hashmap__free_values(t->entries, entry_free);
	free(t);
}

static struct kstack_entry *entry_read(const struct ksyms *ks, int map_fd,
				       uint64_t h)
{
	struct kstack stack;
	struct kstack_entry *e;

	if (bpf_map_lookup_elem(map_fd, &h, &stack))
		return NULL;
	e = xcalloc(1, sizeof(*e));
	e->frames = format_frames(
		ks, (const uint64_t *)stack.ips,
		depth_of((const uint64_t *)stack.ips, KSTACK_DEPTH), &e->n);
	if (!e->frames) {
		free(e);
		return NULL;
	}
	return e;
}

const char *const *kstacks__frames(struct kstacks *t, const struct ksyms *ks,
				   int map_fd, uint64_t h, size_t *n)
{
	uint64_t *slot = h ? hashmap__find(t->entries, h) : NULL;
	struct kstack_entry *e;

	*n = 0;
	if (!h)
		return NULL;
	e = slot ? (struct kstack_entry *)(uintptr_t)*slot :
		   entry_read(ks, map_fd, h);
	if (!e)
		return NULL;
	if (!slot)
		hashmap__set(t->entries, h, (uintptr_t)e);
	e->used = t->tick;
	*n = e->n;
	return (const char *const *)e->frames;
}

void kstacks__forget(struct kstacks *t, uint64_t h)
{
	uint64_t *slot = hashmap__find(t->entries, h);

	if (!slot)
		return;
	entry_free((void *)(uintptr_t)*slot);
	hashmap__delete(t->entries, h);
}

/* Whether h's stack went unasked for in this tick and the one before:
 * it goes, with its frames. */
static bool unused(void *ctx, const void *key, const void *value)
{
	struct kstacks *t = ctx;
	uint64_t h = *(const uint64_t *)key, *slot;

	(void)value;
	slot = hashmap__find(t->entries, h);
	if (slot &&
	    ((struct kstack_entry *)(uintptr_t)*slot)->used + 1 >= t->tick)
		return false;
	kstacks__forget(t, h);
	return true;
}

size_t kstacks__sweep(struct kstacks *t, int map_fd, size_t entries, bool full)
{
	size_t gone = 0;

	if (full || hashmap__count(t->entries) >= entries / 4 * 3)
		map_sweep(map_fd, sizeof(uint64_t), 0, unused, t, &gone);
	t->tick++;
	return gone;
}
