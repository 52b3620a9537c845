// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "aging.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

struct slot {
	uint64_t key, at_ns;
	int32_t partition;
	bool live;
	/* then item_size bytes */
};

struct aging {
	struct hashmap *index; /* key -> ring position */
	char *ring;
	size_t slot_size;
	uint64_t size, head, tail; /* a power of two; free-running */
};

struct aging *aging__new(size_t max, size_t item_size)
{
	struct aging *a = xcalloc(1, sizeof(*a));

	a->size = 1;
	while (a->size < max)
		a->size <<= 1;
	/* items keep their alignment after the header */
	a->slot_size = (sizeof(struct slot) + item_size + 7) & ~(size_t)7;
	a->ring = xcalloc(a->size, a->slot_size);
	a->index = hashmap__new();
	return a;
}

void aging__free(struct aging *a)
{
	if (!a)
		return;
	hashmap__free(a->index);
	free(a->ring);
	free(a);
}

static struct slot *slot_at(const struct aging *a, uint64_t pos)
{
	return (struct slot *)(a->ring + (pos & (a->size - 1)) * a->slot_size);
}

static void *item_of(struct slot *s)
{
	return s + 1;
}

static void forget_at(struct aging *a, uint64_t pos)
{
	struct slot *s = slot_at(a, pos);
	uint64_t *i = hashmap__find(a->index, s->key);

	if (i && *i == pos)
		hashmap__delete(a->index, s->key);
	s->live = false;
}

/* The head goes; returns whether it was still there. */
static bool pop(struct aging *a)
{
	uint64_t pos = a->head++;
	bool live = slot_at(a, pos)->live;

	if (live)
		forget_at(a, pos);
	return live;
}

bool aging__add(struct aging *a, uint64_t key, int32_t partition,
		const void *item, uint64_t now_ns)
{
	bool evicted = false;
	uint64_t pos;
	struct slot *s;

	if (a->tail - a->head == a->size)
		evicted = pop(a);
	pos = a->tail++;
	s = slot_at(a, pos);
	s->key = key;
	s->at_ns = now_ns;
	s->partition = partition;
	s->live = true;
	memcpy(item_of(s), item, a->slot_size - sizeof(*s));
	hashmap__set(a->index, key, pos);
	return evicted;
}

void *aging__find(const struct aging *a, uint64_t key)
{
	uint64_t *pos = hashmap__find(a->index, key);

	return pos ? item_of(slot_at(a, *pos)) : NULL;
}

void aging__forget(struct aging *a, uint64_t key)
{
	uint64_t *pos = hashmap__find(a->index, key);

	if (pos)
		forget_at(a, *pos);
}

size_t aging__expire(struct aging *a, uint64_t cutoff_ns)
{
	size_t n = 0;

	while (a->head != a->tail && (!slot_at(a, a->head)->live ||
				      slot_at(a, a->head)->at_ns < cutoff_ns))
		n += pop(a);
	return n;
}

size_t aging__take(struct aging *a,
		   bool (*revoked)(int32_t partition, void *ctx),
		   void (*fn)(const void *item, void *ctx), void *ctx)
{
	uint64_t pos;
	size_t n = 0;

	for (pos = a->head; pos != a->tail; pos++) {
		struct slot *s = slot_at(a, pos);

		if (!s->live || !revoked(s->partition, ctx))
			continue;
		fn(item_of(s), ctx);
		forget_at(a, pos);
		n++;
	}
	return n;
}

size_t aging__count(const struct aging *a)
{
	return hashmap__count(a->index);
}
