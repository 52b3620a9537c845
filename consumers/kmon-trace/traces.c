// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Traces are kept in a list by last arrival, oldest first, so the quiet
 * ones and the one to evict are at its head (a trace held past its quiet
 * time goes back to the tail, as if a span had come). A trace that another was
 * merged into answers to both trace ids: every id maps to it.
 *
 * Late ends: a call whose trace was written before its server end came
 * is remembered (its id and trace) for late_ns, in a ring by time; the
 * server end arriving then still hangs under it and takes its trace id,
 * so a collector puts the two pieces of the trace together. The other
 * way round cannot be mended: a server span already written keeps the
 * trace id it was written with. */
#include <stdlib.h>
#include <string.h>

#include "traces.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

struct trace {
	struct trace_id id;
	struct span **spans;
	size_t n, cap;
	uint64_t *keys; /* every trace id (hashed) that names this trace */
	size_t nkeys, kcap;
	uint64_t first_ns, last_ns;
	bool held; /* kept past its quiet time once (traces__expire) */
	struct trace *prev, *next;
};

/* A written client end still waiting for its server end. */
struct late_end {
	uint64_t key, client_id, at_ns;
	struct trace_id trace;
	uint32_t resp_seq;
};

#define LATE_MAX 65536 /* a power of two */
/* Addresses of monitored hosts learned, at most. */
#define HOSTS_MAX 65536

struct traces {
	struct hashmap *by_id; /* trace key -> struct trace * */
	struct hashmap *late; /* join key -> index in ring */
	struct hashmap *hosts; /* hashed laddr of every span: monitored */
	struct hashmap *open_ids; /* span id -> 1, of every open span */
	/* traces__remember_written: ids of spans written, by time */
	struct hashmap *written_ids; /* span id -> index in written */
	uint64_t *written;
	uint64_t written_size, written_head, written_tail;
	struct late_end *ring;
	uint64_t ring_head, ring_tail; /* free-running */
	uint64_t late_ns, now;
	/* Ends waiting for their other end: join key -> struct span * */
	struct hashmap *clients, *servers;
	struct trace *head, *tail;
	size_t max_traces, max_spans;
	trace_write_fn write;
	void *ctx;
	struct trace_counts c;
};

struct traces *traces__new(size_t max_traces, size_t max_spans,
			   uint64_t late_ns, trace_write_fn write, void *ctx)
{
	struct traces *t = xcalloc(1, sizeof(*t));

	t->late_ns = late_ns;
	t->late = hashmap__new();
	t->hosts = hashmap__new();
	t->open_ids = hashmap__new();
	t->ring = xcalloc(LATE_MAX, sizeof(*t->ring));
	t->by_id = hashmap__new();
	t->clients = hashmap__new();
	t->servers = hashmap__new();
	t->max_traces = max_traces ? max_traces : 1;
	t->max_spans = max_spans ? max_spans : 1;
	t->write = write;
	t->ctx = ctx;
	return t;
}

static void list_unlink(struct traces *t, struct trace *tr)
{
	if (tr->prev)
		tr->prev->next = tr->next;
	else
		t->head = tr->next;
	if (tr->next)
		tr->next->prev = tr->prev;
	else
		t->tail = tr->prev;
	tr->prev = tr->next = NULL;
}

static void list_append(struct traces *t, struct trace *tr)
{
	tr->prev = t->tail;
	tr->next = NULL;
	if (t->tail)
		t->tail->next = tr;
	else
		t->head = tr;
	t->tail = tr;
}

static void touch(struct traces *t, struct trace *tr, uint64_t now)
{
	tr->last_ns = now;
	if (t->tail != tr) {
		list_unlink(t, tr);
		list_append(t, tr);
	}
}

static void add_key(struct trace *tr, uint64_t key)
{
	if (tr->nkeys == tr->kcap) {
		tr->kcap = tr->kcap ? tr->kcap * 2 : 2;
		tr->keys = xrealloc(tr->keys, tr->kcap * sizeof(*tr->keys));
	}
	tr->keys[tr->nkeys++] = key;
}

static void add_span(struct trace *tr, struct span *s)
{
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? tr->cap * 2 : 4;
		tr->spans = xrealloc(tr->spans, tr->cap * sizeof(*tr->spans));
	}
	tr->spans[tr->n++] = s;
	s->trace = tr;
}

static void forget_pending(struct traces *t, struct span *s)
{
	struct hashmap *m = s->client ? t->clients : t->servers;
	uint64_t key = span__join_key(s), *slot;

	if (!s->has_seq || s->joined)
		return;
	slot = hashmap__find(m, key);
	if (slot && *slot == (uint64_t)(uintptr_t)s)
		hashmap__delete(m, key);
}

static void late_pop(struct traces *t)
{
	uint64_t i = t->ring_head++ & (LATE_MAX - 1);
	uint64_t *v = hashmap__find(t->late, t->ring[i].key);

	if (v && *v == i)
		hashmap__delete(t->late, t->ring[i].key);
}

static void late_expire(struct traces *t)
{
	while (t->ring_head != t->ring_tail &&
	       t->ring[t->ring_head & (LATE_MAX - 1)].at_ns + t->late_ns <=
		       t->now)
		late_pop(t);
}

/* Remembers a written call whose server end has not come. */
static void late_add(struct traces *t, const struct span *s,
		     struct trace_id trace)
{
	uint64_t key = span__join_key(s), i;

	if (!t->late_ns || !s->has_seq || s->joined || s->ambiguous)
		return;
	if (hashmap__find(t->late, key)) {
		hashmap__delete(t->late, key); /* two calls, one key */
		t->c.ambiguous += 2;
		return;
	}
	if (t->ring_tail - t->ring_head == LATE_MAX)
		late_pop(t);
	i = t->ring_tail++ & (LATE_MAX - 1);
	t->ring[i] = (struct late_end){ .key = key,
					.client_id = s->id,
					.at_ns = t->now,
					.trace = trace,
					.resp_seq = s->resp_seq };
	hashmap__set(t->late, key, i);
}

static void remember_written(struct traces *t, uint64_t id)
{
	uint64_t i, *v;

	if (t->written_tail - t->written_head == t->written_size) {
		i = t->written_head++ & (t->written_size - 1);
		v = hashmap__find(t->written_ids, t->written[i]);
		if (v && *v == i)
			hashmap__delete(t->written_ids, t->written[i]);
	}
	i = t->written_tail++ & (t->written_size - 1);
	t->written[i] = id;
	hashmap__set(t->written_ids, id, i);
}

void traces__remember_written(struct traces *t, size_t max)
{
	t->written_size = 1;
	while (t->written_size < max)
		t->written_size <<= 1;
	t->written = xcalloc(t->written_size, sizeof(*t->written));
	t->written_ids = hashmap__new();
}

static void write_trace(struct traces *t, struct trace *tr, bool evicted)
{
	struct trace_view v = {
		.id = tr->id, .spans = tr->spans, .n = tr->n, .evicted = evicted
	};
	size_t i;

	for (i = 0; i < tr->n; i++) {
		struct span *s = tr->spans[i];

		if (s->client && !s->joined) {
			t->c.unmatched_client++;
			late_add(t, s, tr->id);
		} else if (!s->client && !s->joined && !s->parent)
			t->c.unmatched_server++;
		forget_pending(t, s);
		hashmap__delete(t->open_ids, s->id);
		if (t->written)
			remember_written(t, s->id);
	}
	t->write(&v, t->ctx);
	t->c.traces_written++;
	t->c.spans_written += tr->n;
	t->c.evicted += evicted;
	t->c.open_traces--;
	t->c.open_spans -= tr->n;
	for (i = 0; i < tr->nkeys; i++)
		hashmap__delete(t->by_id, tr->keys[i]);
	for (i = 0; i < tr->n; i++)
		span__free(tr->spans[i]);
	list_unlink(t, tr);
	free(tr->spans);
	free(tr->keys);
	free(tr);
}

static struct trace *find_trace(struct traces *t, struct trace_id id)
{
	uint64_t *v = hashmap__find(t->by_id, trace_id__key(id));

	return v ? (struct trace *)(uintptr_t)*v : NULL;
}

/* Moves every span of src into dst, whose trace id they take. */
static void merge(struct traces *t, struct trace *src, struct trace *dst)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		add_span(dst, src->spans[i]);
	for (i = 0; i < src->nkeys; i++) {
		hashmap__set(t->by_id, src->keys[i], (uintptr_t)dst);
		add_key(dst, src->keys[i]);
	}
	if (src->last_ns > dst->last_ns)
		dst->last_ns = src->last_ns;
	list_unlink(t, src);
	t->c.open_traces--;
	free(src->spans);
	free(src->keys);
	free(src);
}

static void join_ends(struct traces *t, struct span *client,
		      struct span *server, uint64_t now)
{
	if (server->parent && server->parent != client->id) {
		t->c.conflicts++;
		return;
	}
	server->parent = client->id;
	server->joined = client->joined = true;
	t->c.joined++;
	if (server->trace != client->trace) {
		merge(t, server->trace, client->trace);
		touch(t, client->trace, now);
	}
}

/* The server end s of a call already written: s takes the call as its
 * parent and the call's trace id, with every span of its trace. */
static bool late_join(struct traces *t, struct span *s, uint64_t key,
		      uint64_t now)
{
	uint64_t *v, tkey;
	struct late_end *e;
	struct trace *tr = s->trace, *target;

	late_expire(t);
	v = hashmap__find(t->late, key);
	if (!v)
		return false;
	e = &t->ring[*v];
	if (e->resp_seq != s->resp_seq) {
		t->c.mismatched++;
		return false;
	}
	hashmap__delete(t->late, key);
	if (s->parent && s->parent != e->client_id) {
		t->c.conflicts++;
		return true;
	}
	s->parent = e->client_id;
	s->joined = true;
	t->c.joined++;
	t->c.late_joined++;
	t->c.unmatched_client--; /* counted when the call was written */
	target = find_trace(t, e->trace);
	if (target && target != tr) {
		merge(t, tr, target);
		touch(t, target, now);
	} else if (!target) {
		tr->id = e->trace;
		tkey = trace_id__key(e->trace);
		add_key(tr, tkey);
		hashmap__set(t->by_id, tkey, (uintptr_t)tr);
	}
	return true;
}

static void try_join(struct traces *t, struct span *s, uint64_t now)
{
	struct hashmap *mine = s->client ? t->clients : t->servers;
	struct hashmap *other = s->client ? t->servers : t->clients;
	uint64_t key = span__join_key(s), *slot;
	struct span *peer;

	slot = hashmap__find(mine, key);
	if (slot) {
		/* Two ends of one side under one key: which of them the
		 * other end belongs to is unknown, so neither is joined. */
		((struct span *)(uintptr_t)*slot)->ambiguous = true;
		s->ambiguous = true;
		hashmap__delete(mine, key);
		t->c.ambiguous += 2;
		return;
	}
	slot = hashmap__find(other, key);
	if (!slot) {
		if (s->client || !late_join(t, s, key, now))
			hashmap__set(mine, key, (uintptr_t)s);
		return;
	}
	peer = (struct span *)(uintptr_t)*slot;
	if (peer->resp_seq != s->resp_seq) {
		t->c.mismatched++;
		return;
	}
	hashmap__delete(other, key);
	if (s->client)
		join_ends(t, s, peer, now);
	else
		join_ends(t, peer, s, now);
}

void traces__add(struct traces *t, struct span *s, uint64_t now_ns)
{
	uint64_t key = trace_id__key(s->trace_id);
	struct trace *tr;

	t->c.spans++;
	t->now = now_ns;
	while (t->head && (t->c.open_spans >= t->max_spans ||
			   (t->c.open_traces >= t->max_traces &&
			    !hashmap__find(t->by_id, key))))
		write_trace(t, t->head, true);
	tr = find_trace(t, s->trace_id);
	if (!tr) {
		tr = xcalloc(1, sizeof(*tr));
		tr->id = s->trace_id;
		tr->first_ns = now_ns;
		add_key(tr, key);
		hashmap__set(t->by_id, key, (uintptr_t)tr);
		list_append(t, tr);
		t->c.open_traces++;
	}
	add_span(tr, s);
	hashmap__set(t->open_ids, s->id, 1);
	t->c.open_spans++;
	touch(t, tr, now_ns);
	if (s->laddr && hashmap__count(t->hosts) < HOSTS_MAX)
		hashmap__set(t->hosts, fnv1a(s->laddr, strlen(s->laddr)), 1);
	if (s->has_seq)
		try_join(t, s, now_ns);
}

/* A request from another monitored host (its address is the local
 * address of spans kmond wrote there) whose caller has not come yet: the
 * call may still be on its way (its node's records lag), and once this
 * trace is written it could not move under it. */
static bool awaits_caller(const struct traces *t, const struct trace *tr)
{
	size_t i;

	for (i = 0; i < tr->n; i++) {
		const struct span *s = tr->spans[i];

		if (s->client || s->parent || s->joined || s->ambiguous ||
		    !s->has_seq || !s->raddr || !s->laddr ||
		    strcmp(s->raddr, s->laddr) == 0) /* same host */
			continue;
		if (hashmap__find(t->hosts, fnv1a(s->raddr, strlen(s->raddr))))
			return true;
	}
	return false;
}

void traces__expire(struct traces *t, uint64_t now_ns, uint64_t quiet_ns)
{
	struct trace *tr;

	t->now = now_ns;
	late_expire(t);
	if (!quiet_ns) /* a held trace must not be quiet again at once */
		quiet_ns = 1;
	while ((tr = t->head) && now_ns - tr->last_ns >= quiet_ns) {
		if (now_ns - tr->first_ns < t->late_ns &&
		    awaits_caller(t, tr)) {
			/* looked at again after another quiet time */
			t->c.held += !tr->held;
			tr->held = true;
			touch(t, tr, now_ns);
			continue;
		}
		write_trace(t, tr, false);
	}
}

void traces__flush(struct traces *t)
{
	while (t->head)
		write_trace(t, t->head, false);
}

/* Out of every map and the list, its spans to fn, unwritten and
 * uncounted as written: another member will write them. */
static void take_trace(struct traces *t, struct trace *tr, trace_take_fn fn,
		       void *ctx)
{
	size_t i;

	for (i = 0; i < tr->n; i++) {
		forget_pending(t, tr->spans[i]);
		hashmap__delete(t->open_ids, tr->spans[i]->id);
	}
	for (i = 0; i < tr->nkeys; i++)
		hashmap__delete(t->by_id, tr->keys[i]);
	t->c.open_traces--;
	t->c.open_spans -= tr->n;
	list_unlink(t, tr);
	for (i = 0; i < tr->n; i++) {
		tr->spans[i]->trace = NULL;
		fn(tr->spans[i], ctx);
	}
	free(tr->spans);
	free(tr->keys);
	free(tr);
}

bool traces__has_span(const struct traces *t, uint64_t id)
{
	return hashmap__find(t->open_ids, id) ||
	       (t->written_ids && hashmap__find(t->written_ids, id));
}

bool traces__take(struct traces *t, struct trace_id id,
		  struct trace_id *merged_into, trace_take_fn fn, void *ctx)
{
	struct trace *tr = find_trace(t, id);

	*merged_into = id;
	if (!tr)
		return false;
	if (!trace_id__eq(tr->id, id)) {
		*merged_into = tr->id;
		return false;
	}
	take_trace(t, tr, fn, ctx);
	return true;
}

size_t traces__take_partitions(struct traces *t,
			       bool (*revoked)(int32_t partition, void *ctx),
			       trace_take_fn fn, void *ctx)
{
	struct trace *tr, *next;
	size_t i, n = 0;

	for (tr = t->head; tr; tr = next) {
		next = tr->next;
		for (i = 0; i < tr->n; i++)
			if (revoked(tr->spans[i]->partition, ctx))
				break;
		if (i == tr->n)
			continue;
		take_trace(t, tr, fn, ctx);
		n++;
	}
	return n;
}

const struct trace_counts *traces__counts(const struct traces *t)
{
	return &t->c;
}

void traces__free(struct traces *t)
{
	struct trace *tr, *next;
	size_t i;

	if (!t)
		return;
	for (tr = t->head; tr; tr = next) {
		next = tr->next;
		for (i = 0; i < tr->n; i++)
			span__free(tr->spans[i]);
		free(tr->spans);
		free(tr->keys);
		free(tr);
	}
	hashmap__free(t->by_id);
	hashmap__free(t->late);
	hashmap__free(t->hosts);
	hashmap__free(t->open_ids);
	hashmap__free(t->written_ids);
	free(t->written);
	free(t->ring);
	hashmap__free(t->clients);
	hashmap__free(t->servers);
	free(t);
}
