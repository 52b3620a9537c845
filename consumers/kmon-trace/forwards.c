// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A ring by time and a map from the hashed trace id into it, as
 * exchanges.c keeps its ends. */
#include <stdlib.h>

#include "forwards.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

struct slot {
	struct forward fw;
	uint64_t at_ns;
	bool live;
};

struct forwards {
	struct hashmap *by_from; /* hashed from -> ring index */
	struct slot *ring;
	uint64_t size, head, tail;
	uint64_t late_ns;
};

static uint64_t id_key(struct trace_id id)
{
	return fnv1a_more(fnv1a(&id.hi, sizeof(id.hi)), &id.lo, sizeof(id.lo));
}

struct forwards *forwards__new(size_t max, uint64_t late_ns)
{
	struct forwards *f = xcalloc(1, sizeof(*f));

	f->size = 1;
	while (f->size < max)
		f->size <<= 1;
	f->ring = xcalloc(f->size, sizeof(*f->ring));
	f->by_from = hashmap__new();
	f->late_ns = late_ns;
	return f;
}

void forwards__free(struct forwards *f)
{
	if (!f)
		return;
	hashmap__free(f->by_from);
	free(f->ring);
	free(f);
}

static struct slot *slot_of(const struct forwards *f, uint64_t i)
{
	return &f->ring[i & (f->size - 1)];
}

static void forget(struct forwards *f, uint64_t i)
{
	struct slot *s = slot_of(f, i);

	if (!s->live)
		return;
	hashmap__delete(f->by_from, id_key(s->fw.from));
	s->live = false;
}

bool forwards__add(struct forwards *f, const struct forward *fw,
		   uint64_t now_ns)
{
	uint64_t i;

	forwards__expire(f, now_ns);
	if (forwards__find(f, fw->from))
		return true;
	if (f->tail - f->head == f->size)
		forget(f, f->head++);
	i = f->tail++;
	*slot_of(f, i) =
		(struct slot){ .fw = *fw, .at_ns = now_ns, .live = true };
	hashmap__set(f->by_from, id_key(fw->from), i);
	return false;
}

const struct forward *forwards__find(const struct forwards *f,
				     struct trace_id id)
{
	uint64_t *i = hashmap__find(f->by_from, id_key(id));
	const struct slot *s;

	if (!i)
		return NULL;
	s = slot_of(f, *i);
	/* two ids with one hash: not this one */
	return trace_id__eq(s->fw.from, id) ? &s->fw : NULL;
}

void forwards__expire(struct forwards *f, uint64_t now_ns)
{
	while (f->head != f->tail &&
	       (!slot_of(f, f->head)->live ||
		slot_of(f, f->head)->at_ns + f->late_ns <= now_ns))
		forget(f, f->head++);
}

size_t forwards__hand_over(struct forwards *f,
			   bool (*revoked)(int32_t partition, void *ctx),
			   void (*fn)(const struct forward *fw, void *ctx),
			   void *ctx)
{
	uint64_t i;
	size_t n = 0;

	for (i = f->head; i != f->tail; i++) {
		struct slot *s = slot_of(f, i);

		if (!s->live || !revoked(s->fw.partition, ctx))
			continue;
		fn(&s->fw, ctx);
		forget(f, i);
		n++;
	}
	return n;
}

size_t forwards__count(const struct forwards *f)
{
	return hashmap__count(f->by_from);
}
