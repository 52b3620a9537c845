/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Measured load of each monitored server, and of each endpoint monitored
 * callers call, for tcp.bpf.c: every request start and end moves its
 * server's (or endpoint's) accumulators (tcp_load.h), so arrivals,
 * completions, the time-average number in progress and the busy time
 * come exact from the kernel's own clock, with no event per request.
 *
 * A request is in progress from its first byte received to the last
 * byte of its response sent (client side: from its first byte sent to
 * the last byte of the reply received). Which is the last is known only
 * when the next request or the close comes, so the request ends at its
 * first response bytes and each further one extends it by the gap: area
 * and latency stay exact; busy time too, except when another request
 * began during that gap (the gap is then counted only from that request
 * on).
 *
 * Occupancy targets (a service, or an endpoint) keep more: their
 * response times (all, and by the number in progress at arrival), and
 * while their budget for the interval lasts, each change of that number
 * as an event (tcp_load_step). */
#ifndef KMON_TCP_LOAD_BPF_H
#define KMON_TCP_LOAD_BPF_H

#include "tcp_load.h"
#include "tcp_state.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TCP_MAX_LOADS);
	__type(key, __u32);
	__type(value, struct tcp_load);
} loads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_LOADS);
	__type(key, struct tcp_load_key);
	__type(value, __u32);
} load_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, TCP_MAX_LOADS);
	__type(value, __u32);
} load_free SEC(".maps");

/* The occupancy targets; user space makes and removes the entries, and
 * says in targets_on whether there are any (a request then skips the
 * lookup). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_TARGETS);
	__type(key, struct tcp_target_key);
	__type(value, struct tcp_target);
} load_targets SEC(".maps");

bool targets_on;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TCP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct tcp_target_data);
} target_data SEC(".maps");

/* Steps each target may still send this interval (signed). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TCP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __s64);
} target_steps_left SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TCP_STEPS_BYTES);
} load_steps SEC(".maps");

/* The interval number, written by user space as each interval closes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} load_epoch SEC(".maps");

static __always_inline void call_key_of(const struct tcp_conn *c,
					struct tcp_call_key *k)
{
	__builtin_memcpy(k->addr, c->t.raddr, 16);
	k->port = c->t.rport;
	k->family = c->t.family;
}

/* Whose load a request moves: its server's (service, or pid without
 * one), or on the client side the endpoint it calls. */
static __always_inline void load_key(const struct tcp_conn *c,
				     struct tcp_load_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	if (c->role == TCP_ROLE_CLIENT) {
		call_key_of(c, &k->call);
	} else {
		k->svc = c->svc;
		k->pid = c->svc ? 0 : c->pid;
	}
}

static __always_inline bool load_owned_by(const struct tcp_load *v,
					  const struct tcp_load_key *k)
{
	const __u64 *a = (const __u64 *)&v->key, *b = (const __u64 *)k;

	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* The slot of c's key when the connection has none yet, or its key
 * changed (a reload), or user space freed it: from load_slots, or a free
 * slot made the key's. */
static __always_inline struct tcp_load *load_find(struct tcp_conn *c,
						  const struct tcp_load_key *k)
{
	struct tcp_load *v;
	__u32 *found, slot;

	found = bpf_map_lookup_elem(&load_slots, k);
	if (found) {
		slot = *found;
	} else {
		if (bpf_map_pop_elem(&load_free, &slot))
			goto full;
		v = bpf_map_lookup_elem(&loads, &slot);
		if (!v)
			goto full;
		v->key = *k;
		if (bpf_map_update_elem(&load_slots, k, &slot, BPF_NOEXIST)) {
			/* another CPU gave the key a slot first */
			__builtin_memset(&v->key, 0, sizeof(v->key));
			bpf_map_push_elem(&load_free, &slot, 0);
			found = bpf_map_lookup_elem(&load_slots, k);
			if (!found)
				goto full;
			slot = *found;
		}
	}
	v = bpf_map_lookup_elem(&loads, &slot);
	if (!v || !load_owned_by(v, k))
		goto full;
	c->load_slot = slot + 1;
	return v;
full:
	stat_inc(&tcp_stats, TCP_LOADS_FULL);
	return NULL;
}

/* c's accumulators: one array load with the connection's slot (the
 * owner checked), load_find once per connection. */
static __always_inline struct tcp_load *load_of(struct tcp_conn *c)
{
	__u32 slot = c->load_slot - 1; /* none: past the array */
	struct tcp_load_key k;
	struct tcp_load *v;

	load_key(c, &k);
	v = bpf_map_lookup_elem(&loads, &slot);
	if (v && load_owned_by(v, &k))
		return v;
	return load_find(c, &k);
}

/* Raises this interval's largest in_progress to n. */
static __always_inline void load_raise_max(struct tcp_load *v, __u64 n)
{
	__u64 *epoch, *m, old, want;
	__u32 key = 0, tag;
	int i;

	epoch = bpf_map_lookup_elem(&load_epoch, &key);
	if (!epoch)
		return;
	tag = (__u32)*epoch;
	m = &v->max[tag & 1];
	/* a count gone below zero by a reload's lost ends reads huge */
	want = (__u64)tag << 32 | (n > 0xffffffffULL ? 0xffffffffULL : n);
	/* Another CPU may raise it at the same moment: compare and swap. */
	for (i = 0; i < 4; i++) {
		old = *m;
		if ((__u32)(old >> 32) == tag && (__u32)old >= (__u32)want)
			return;
		if (__sync_val_compare_and_swap(m, old, want) == old)
			return;
	}
}

/* The occupancy target a request counts for, as its slot + 1 (0: none):
 * looked up once, at its start, and only while there are targets. */
static __always_inline __u8 target_of(const struct tcp_conn *c)
{
	struct tcp_target_key k;
	struct tcp_target *t;

	if (!targets_on)
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	if (c->role == TCP_ROLE_CLIENT)
		call_key_of(c, &k.call);
	else if (c->svc)
		k.svc = c->svc;
	else
		return 0; /* a target is a service */
	t = bpf_map_lookup_elem(&load_targets, &k);
	return t && t->slot < TCP_MAX_TARGETS ? t->slot + 1 : 0;
}

/* A target's number in progress became n at now, by delta (an end: the
 * request's own response time was own, ns >> TCP_LOAD_SQ_SHIFT). */
static __always_inline void load_step(const struct tcp_conn *c, __u64 now,
				      __u64 n, int delta, __u64 own)
{
	__u32 slot = c->target_slot - 1;
	struct tcp_load_step step = { .t_ns = now,
				      .n = n < 0xffff ? (__u16)n : 0xffff,
				      .slot = (__u8)slot,
				      .delta = (__s8)delta,
				      .own = own < 0xffffffffULL ? (__u32)own :
								   0xffffffff };
	__s64 *left = bpf_map_lookup_elem(&target_steps_left, &slot);
	struct tcp_target_data *g = bpf_map_lookup_elem(&target_data, &slot);

	if (!left || !g || __sync_fetch_and_add(left, -1) <= 0)
		return;
	step.seq = (__u32)__sync_fetch_and_add(&g->steps, 1);
	if (bpf_ringbuf_output(&load_steps, &step, sizeof(step),
			       bpf_ringbuf_query(&load_steps,
						 BPF_RB_AVAIL_DATA) >=
					       TCP_STEPS_BYTES / 8 ?
				       BPF_RB_FORCE_WAKEUP :
				       BPF_RB_NO_WAKEUP))
		stat_inc(&tcp_stats, TCP_STEPS_LOST);
}

/* The request (call) c begins outside the load (load off, or no slot):
 * its ends then move nothing (load_sent and load_closed nothing while
 * load_open is not open, load_sent nothing in TCP_LOAD_NONE). An earlier
 * request still open here (its end's hook on another CPU) was ended by
 * begin_request; this swap only makes sure none stays open. */
static __always_inline void load_none(struct tcp_conn *c)
{
	c->load_state = TCP_LOAD_NONE;
	__sync_val_compare_and_swap(&c->load_open, TCP_LOAD_IS_OPEN,
				    TCP_LOAD_NOT_OPEN);
	c->target_slot = 0;
}

static __always_inline void load_ended(struct tcp_conn *c, struct tcp_load *v,
				       __u64 now, bool completed);

static __always_inline void load_start(struct tcp_conn *c, __u64 now)
{
	struct tcp_load *v = load_of(c);
	__u64 old;

	c->target_slot = target_of(c);
	if (!v) {
		load_none(c);
		return;
	}
	old = tcp_load_in_progress(
		__sync_fetch_and_add(&v->begun_n, TCP_LOAD_START));
	__sync_fetch_and_add(&v->area, -now);
	if (old == 0)
		__sync_fetch_and_add(&v->busy, -now);
	__sync_fetch_and_add(&v->arrivals, 1); /* the last */
	c->load_state = TCP_LOAD_OPEN;
	/* a count gone below zero by a reload's lost ends reads huge */
	c->load_n = old < TCP_LOAD_GIVEN_N ? (__u32)old : TCP_LOAD_GIVEN_N;
	load_raise_max(v, old + 1);
	if (c->target_slot)
		load_step(c, now, old + 1, 1, 0);
	/* Open only now that it is counted (an end cannot come first). The
	 * connection may have closed since this program found it (a reset,
	 * on another CPU): then no end is coming, and it ends here. */
	if (__sync_val_compare_and_swap(&c->load_open, TCP_LOAD_NOT_OPEN,
					TCP_LOAD_IS_OPEN) ==
	    TCP_LOAD_CLOSED_MARK)
		load_ended(c, v, now, false);
}

/* A target's request completed after `lat` ns (occupancy_given_n.h). */
static __always_inline void load_given(const struct tcp_conn *c, __u64 lat)
{
	__u32 slot = c->target_slot - 1;
	struct tcp_target_data *g = bpf_map_lookup_elem(&target_data, &slot);
	__u64 sq = lat >> TCP_LOAD_SQ_SHIFT, n = c->load_n;
	__u64 b = hist_bucket(lat);

	/* Debian 6.1's verifier loses the bound a 32-bit check gives an
	 * index spilled to the stack: 64-bit indexes, masked in the
	 * register every later use reads (n <= TCP_LOAD_GIVEN_N, b <
	 * HIST_BUCKETS already). */
	asm volatile("%[n] &= 127" : [n] "+r"(n));
	asm volatile("%[b] &= 1023" : [b] "+r"(b));
	if (!g || b >= HIST_BUCKETS)
		return;
	__sync_fetch_and_add(&g->all[b], 1);
	if (n >= TCP_LOAD_GIVEN_N)
		return;
	__sync_fetch_and_add(&g->count[n], 1);
	__sync_fetch_and_add(&g->sum_ns[n], lat);
	__sync_fetch_and_add(&g->sum_sq[n], sq * sq);
	if (n == 0)
		__sync_fetch_and_add(&g->empty[b], 1);
}

/* The request stops being in progress at now in v, its load; completed:
 * it was answered (not closed unanswered). */
static __always_inline void load_ended(struct tcp_conn *c, struct tcp_load *v,
				       __u64 now, bool completed)
{
	__u64 old;

	if (!v)
		return;
	old = tcp_load_in_progress(
		__sync_fetch_and_add(&v->begun_n, TCP_LOAD_END));
	if (old == 1) {
		__sync_fetch_and_add(&v->busy, now);
		v->idle_since = now;
	}
	__sync_fetch_and_add(&v->area, now);
	if (completed) {
		__sync_fetch_and_add(&v->latency_sum, now - c->start_ns);
		__sync_fetch_and_add(&v->completions, 1); /* the last */
	} else {
		__sync_fetch_and_add(&v->unanswered, 1); /* the last */
	}
	if (c->target_slot) {
		if (completed)
			load_given(c, now - c->start_ns);
		load_step(c, now, old - 1, -1,
			  (now - c->start_ns) >> TCP_LOAD_SQ_SHIFT);
	}
	c->load_state = completed ? TCP_LOAD_SENT : TCP_LOAD_CLOSED;
	c->load_end_ns = now;
}

/* The same, once: an answer and a close on two CPUs can both find the
 * request open; the one that takes load_open back ends it. */
static __always_inline void load_end(struct tcp_conn *c, __u64 now,
				     bool completed)
{
	if (__sync_val_compare_and_swap(&c->load_open, TCP_LOAD_IS_OPEN,
					TCP_LOAD_NOT_OPEN) == TCP_LOAD_IS_OPEN)
		load_ended(c, load_of(c), now, completed);
}

/* An ended request turns out to go on until now (more response bytes). */
static __always_inline void load_extend(struct tcp_conn *c, __u64 now,
					bool completed)
{
	struct tcp_load *v = load_of(c);
	__u64 gap = now - c->load_end_ns, from;

	if (!v)
		return;
	__sync_fetch_and_add(&v->begun_n, TCP_LOAD_BEGIN);
	__sync_fetch_and_add(&v->area, gap);
	/* Idle since it ended: that idle time was busy after all. */
	if (tcp_load_in_progress(v->begun_n) == 0) {
		from = v->idle_since > c->load_end_ns ? v->idle_since :
							c->load_end_ns;
		/* another connection's end may be later than now */
		if (now > from)
			__sync_fetch_and_add(&v->busy, now - from);
		v->idle_since = now;
	}
	if (completed) {
		__sync_fetch_and_add(&v->latency_sum, now - c->start_ns);
		__sync_fetch_and_add(&v->completions, 1); /* the last */
	} else {
		__sync_fetch_and_add(&v->latency_sum, gap);
		__sync_fetch_and_add(&v->extended, 1); /* the last */
	}
	c->load_state = TCP_LOAD_SENT;
	c->load_end_ns = now;
}

/* Response bytes sent at now (client side: reply bytes received). A
 * request open in the load ends, whatever its state says: an end racing
 * on another CPU (begin_request's) may write its state after this
 * request began. */
static __always_inline void load_sent(struct tcp_conn *c, __u64 now)
{
	if (KMON_READ_ONCE(c->load_open) == TCP_LOAD_IS_OPEN)
		load_end(c, now, true);
	else if (c->load_state == TCP_LOAD_SENT)
		load_extend(c, now, false);
	else if (c->load_state == TCP_LOAD_CLOSED)
		load_extend(c, now, true);
}

/* The connection closes: a request (or a call) still unanswered ends
 * here (a server's answer may still come, see answer_after_close). This
 * may run on another CPU than the request's thread (a reset's softirq),
 * even while a program there begins a request on it, on a connection
 * whose role it has not yet set: the mark, whatever the role, tells that
 * program that no end will come. */
static __always_inline void load_closed(struct tcp_conn *c)
{
	if (__sync_lock_test_and_set(&c->load_open, TCP_LOAD_CLOSED_MARK) ==
	    TCP_LOAD_IS_OPEN)
		load_ended(c, load_of(c), bpf_ktime_get_ns(), false);
}

#endif
