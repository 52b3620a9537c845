// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Waiting ends live in a ring by arrival, so the ones that waited long
 * enough, or the oldest when it is full, are at its head; a map from the
 * end's key and side finds one in it. An end taken out of the middle (a
 * join, a hand-over) is marked dead and skipped when the head reaches
 * it. */
#include <stdlib.h>

#include "exchanges.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

#define CLIENT_BIT (1ULL << 63) /* keys are 48 bits */

struct slot {
	struct exchange_end e;
	uint64_t at_ns;
	bool live;
};

struct exchanges {
	struct hashmap *waiting; /* key | side -> ring index */
	struct slot *ring;
	uint64_t size; /* a power of two */
	uint64_t head, tail; /* free-running */
	uint64_t late_ns;
	exchange_move_fn move;
	void *ctx;
	struct exchange_counts c;
};

static uint64_t side_key(uint64_t key, bool client)
{
	return client ? key | CLIENT_BIT : key;
}

struct exchanges *exchanges__new(size_t max_pending, uint64_t late_ns,
				 exchange_move_fn move, void *ctx)
{
	struct exchanges *x = xcalloc(1, sizeof(*x));

	x->size = 1;
	while (x->size < max_pending)
		x->size <<= 1;
	x->ring = xcalloc(x->size, sizeof(*x->ring));
	x->waiting = hashmap__new();
	x->late_ns = late_ns;
	x->move = move;
	x->ctx = ctx;
	return x;
}

void exchanges__free(struct exchanges *x)
{
	if (!x)
		return;
	hashmap__free(x->waiting);
	free(x->ring);
	free(x);
}

static struct slot *slot_of(struct exchanges *x, uint64_t i)
{
	return &x->ring[i & (x->size - 1)];
}

static void forget(struct exchanges *x, uint64_t i)
{
	struct slot *s = slot_of(x, i);

	hashmap__delete(x->waiting, side_key(s->e.key, s->e.client));
	s->live = false;
	x->c.pending--;
}

/* The head goes; counted in *count when it was still waiting. */
static void pop(struct exchanges *x, uint64_t *count)
{
	uint64_t i = x->head++;

	if (slot_of(x, i)->live) {
		forget(x, i);
		(*count)++;
	}
}

static bool same_end(const struct exchange_end *a, const struct exchange_end *b)
{
	return a->key == b->key && a->client == b->client &&
	       a->resp_seq == b->resp_seq && trace_id__eq(a->trace, b->trace);
}

static void wait_for_other(struct exchanges *x, const struct exchange_end *e,
			   uint64_t now)
{
	uint64_t i;

	if (x->tail - x->head == x->size)
		pop(x, &x->c.evicted);
	i = x->tail++;
	*slot_of(x, i) = (struct slot){ .e = *e, .at_ns = now, .live = true };
	hashmap__set(x->waiting, side_key(e->key, e->client), i);
	x->c.pending++;
}

void exchanges__add(struct exchanges *x, const struct exchange_end *e,
		    uint64_t now_ns)
{
	uint64_t *mine, *other;
	const struct exchange_end *peer, *client, *server;

	x->c.ends++;
	exchanges__expire(x, now_ns);
	mine = hashmap__find(x->waiting, side_key(e->key, e->client));
	if (mine && same_end(&slot_of(x, *mine)->e, e)) {
		/* read again after a rebalance: its first reading waits */
		x->c.repeated++;
		return;
	}
	if (mine) {
		/* which of the two the other end belongs to is unknown */
		forget(x, *mine);
		x->c.ambiguous += 2;
		return;
	}
	other = hashmap__find(x->waiting, side_key(e->key, !e->client));
	if (!other) {
		wait_for_other(x, e, now_ns);
		return;
	}
	peer = &slot_of(x, *other)->e;
	if (peer->resp_seq != e->resp_seq) {
		x->c.mismatched++;
		return;
	}
	client = e->client ? e : peer;
	server = e->client ? peer : e;
	x->c.joined++;
	if (!trace_id__eq(client->trace, server->trace)) {
		x->c.moves++;
		x->move(server->trace, client->trace, x->ctx);
	}
	forget(x, *other);
}

void exchanges__expire(struct exchanges *x, uint64_t now_ns)
{
	while (x->head != x->tail &&
	       (!slot_of(x, x->head)->live ||
		slot_of(x, x->head)->at_ns + x->late_ns <= now_ns))
		pop(x, &x->c.expired);
}

size_t exchanges__hand_over(struct exchanges *x,
			    bool (*revoked)(int32_t partition, void *ctx),
			    exchange_end_fn fn, void *ctx)
{
	uint64_t i;
	size_t n = 0;

	for (i = x->head; i != x->tail; i++) {
		struct slot *s = slot_of(x, i);

		if (!s->live || !revoked(s->e.partition, ctx))
			continue;
		fn(&s->e, ctx);
		forget(x, i);
		n++;
	}
	x->c.handed_over += n;
	return n;
}

const struct exchange_counts *exchanges__counts(const struct exchanges *x)
{
	return &x->c;
}
