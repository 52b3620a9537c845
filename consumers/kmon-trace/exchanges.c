// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Waiting ends are kept by their key and side, for late_ns at most
 * (aging.h). */
#include <stdlib.h>

#include "aging.h"
#include "exchanges.h"
#include "lib/xalloc.h"

#define CLIENT_BIT (1ULL << 63) /* keys are 48 bits */

struct exchanges {
	struct aging *waiting; /* key | side -> struct exchange_end */
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

	x->waiting = aging__new(max_pending, sizeof(struct exchange_end));
	x->late_ns = late_ns;
	x->move = move;
	x->ctx = ctx;
	return x;
}

void exchanges__free(struct exchanges *x)
{
	if (!x)
		return;
	aging__free(x->waiting);
	free(x);
}

static void forget(struct exchanges *x, const struct exchange_end *e)
{
	aging__forget(x->waiting, side_key(e->key, e->client));
}

static bool same_end(const struct exchange_end *a, const struct exchange_end *b)
{
	return a->key == b->key && a->client == b->client &&
	       a->resp_seq == b->resp_seq && trace_id__eq(a->trace, b->trace);
}

static void join_or_wait(struct exchanges *x, const struct exchange_end *e,
			 uint64_t now_ns);

void exchanges__add(struct exchanges *x, const struct exchange_end *e,
		    uint64_t now_ns)
{
	x->c.ends++;
	exchanges__expire(x, now_ns);
	join_or_wait(x, e, now_ns);
	x->c.pending = aging__count(x->waiting);
}

static void join_or_wait(struct exchanges *x, const struct exchange_end *e,
			 uint64_t now_ns)
{
	const struct exchange_end *mine, *peer, *client, *server;

	mine = aging__find(x->waiting, side_key(e->key, e->client));
	if (mine && same_end(mine, e)) {
		/* read again after a rebalance: its first reading waits */
		x->c.repeated++;
		return;
	}
	if (mine) {
		/* which of the two the other end belongs to is unknown */
		forget(x, mine);
		x->c.ambiguous += 2;
		return;
	}
	peer = aging__find(x->waiting, side_key(e->key, !e->client));
	if (!peer) {
		x->c.evicted += aging__add(x->waiting,
					   side_key(e->key, e->client),
					   e->partition, e, now_ns);
		return;
	}
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
	forget(x, peer);
}

void exchanges__expire(struct exchanges *x, uint64_t now_ns)
{
	/* an end that waited late_ns goes */
	uint64_t cutoff = now_ns >= x->late_ns ? now_ns - x->late_ns + 1 : 0;

	x->c.expired += aging__expire(x->waiting, cutoff);
	x->c.pending = aging__count(x->waiting);
}

size_t exchanges__hand_over(struct exchanges *x,
			    bool (*revoked)(int32_t partition, void *ctx),
			    exchange_end_fn fn, void *ctx)
{
	size_t n = aging__take(x->waiting, revoked, fn, ctx);

	x->c.handed_over += n;
	x->c.pending = aging__count(x->waiting);
	return n;
}

const struct exchange_counts *exchanges__counts(const struct exchanges *x)
{
	return &x->c;
}
