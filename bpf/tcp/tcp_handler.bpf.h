/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request paths, for tcp_link.bpf.h: which request a thread's handler
 * runs when the thread serves several at once (an event loop).
 *
 * An event loop such as nginx's reads a request and, in the same
 * handler, opens the connection of its call (connect() returns at once,
 * the call is sent later) or sends the call on a kept-alive connection.
 * The evidence is that nothing else happened in between: the thread's
 * last step on a socket kmond follows was reading that request, and it
 * neither blocked nor moved to another CPU since. That step is kept by
 * the CPU (cheap on every read and send).
 *
 * A loop that runs its handlers later than its reads (Python's asyncio:
 * a read schedules the handler, which runs after the loop's next poll,
 * maybe after reads of other requests) could make that step for an
 * older request. So the rule holds only while every other request the
 * thread serves is known to wait for the answer of a call of its own,
 * which wakes its handler (and releases the wait) when it begins, or
 * fails with the call's connection: a unit per such request, taken by
 * the call (or connect) made right after its read, linked or not (the
 * rule's assumption: a handler that waits for a call makes no other, so
 * that call's maker was not waiting yet), held in the units map. A
 * request read and not followed at once by a call holds none, and the
 * thread's calls stay unlinked until it is answered. Counts may err low
 * (a unit lost with its thread's entry), never high: a unit is counted
 * after it is stored and released before its request leaves serving. */
#ifndef KMON_TCP_HANDLER_BPF_H
#define KMON_TCP_HANDLER_BPF_H

#include <bpf/bpf_core_read.h>

#include "tcp.h"

/* tid -> struct tcp_thread. An LRU: threads that exit age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct tcp_thread);
} threads SEC(".maps");

/* A thread's last step on a followed socket, kept by the CPU it ran
 * on: the request it began or went on reading (id), 0 for any other
 * step (a head read alone, its body awaited, too: step_request_read).
 * A few per CPU, by thread id, so that a thread that preempts another
 * there leaves it its own in most cases. */
#define LAST_STEP_WAYS 8
struct last_step {
	__u32 tid;
	__u32 pad;
	__u64 moves; /* thread_moves() then */
	__u64 id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAST_STEP_WAYS);
	__type(key, __u32);
	__type(value, struct last_step);
} last_steps SEC(".maps");

/* A request waiting for its call's answer: request id -> its reader.
 * Not an LRU: a unit dropped unseen would leave its thread's count
 * high; a full map takes no more (their requests count as not waiting). */
struct tcp_unit {
	__u32 tid;
	__u32 pad;
	__u64 born; /* tcp_thread.born of the reader's entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_CONNS);
	__type(key, __u64);
	__type(value, struct tcp_unit);
} units SEC(".maps");

/* Requests that waited for their body, each until it is answered:
 * request id -> its reader. An event loop reads other requests while
 * one waits, and its tcp_thread names only the last it read. An LRU:
 * an entry whose answer went unseen (its connection's state gone) ages
 * out; one dropped early leaves its request's calls unlinked. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_BODY_WAITS);
	__type(key, __u64);
	__type(value, __u32);
} bodies SEC(".maps");

static __always_inline struct last_step *last_step_here(__u32 tid)
{
	__u32 way = tid % LAST_STEP_WAYS;

	return bpf_map_lookup_elem(&last_steps, &way);
}

/* Grows when the thread blocks (its handler may have ended: an event
 * loop polls) or moves to another CPU (where its steps are that CPU's):
 * both void what this CPU saw it do last. Preempted in place, it did
 * nothing meanwhile. */
static __always_inline __u64 thread_moves(void)
{
	struct task_struct *t = (void *)bpf_get_current_task();

	return BPF_CORE_READ(t, nvcsw) + BPF_CORE_READ(t, se.nr_migrations);
}

/* The current thread tid reads request id (its first bytes or more). */
static __always_inline void step_read(__u32 tid, __u64 id)
{
	struct last_step *s = last_step_here(tid);

	if (!s)
		return;
	s->tid = tid;
	s->moves = thread_moves();
	s->id = id;
}

/* Any other step of the current thread on a followed socket: what it
 * read is no longer its last step. */
static __always_inline void step_other(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct last_step *s = last_step_here(tid);

	if (s && s->id && s->tid == tid)
		s->id = 0;
}

/* The request thread tid read in its last step, if it neither blocked
 * nor moved since; else 0. */
static __always_inline __u64 step_last_read(__u32 tid)
{
	struct last_step *s = last_step_here(tid);

	if (!s || !s->id || s->tid != tid || s->moves != thread_moves())
		return 0;
	return s->id;
}

/* Whether thread th still serves request id: the last request it read,
 * or one that waited for its body, unanswered. */
static __always_inline bool still_served(const struct tcp_thread *th, __u64 id)
{
	return KMON_READ_ONCE(th->id) == id ||
	       bpf_map_lookup_elem(&bodies, &id);
}

/* The request whose handler thread tid (entry th) runs now: the one it
 * read in its last step, unanswered, when every other it serves waits
 * for a call's answer (or for its own body); else 0. */
static __always_inline __u64 handler_request(struct tcp_thread *th, __u32 tid)
{
	__u64 id = step_last_read(tid);

	if (!id || !still_served(th, id))
		return 0;
	if (KMON_READ_ONCE(th->serving) != KMON_READ_ONCE(th->waiting) + 1)
		return 0;
	return id;
}

/* Request id (thread tid's, in th) leaves the waiting: its unit, if it
 * has one and nobody took it back first. */
static __always_inline void unit_drop(__u64 id, struct tcp_thread *th)
{
	if (!bpf_map_delete_elem(&units, &id) && KMON_READ_ONCE(th->waiting))
		__sync_fetch_and_add(&th->waiting, -1);
}

/* The answer of connection c's call begins, its connection fails or
 * closes, or another call begins on it: the unit it holds, released. */
static __always_inline void unit_release(struct tcp_conn *c)
{
	__u64 id = __sync_lock_test_and_set(&c->unit_id, 0);
	struct tcp_thread *th;
	struct tcp_unit *u;
	__u32 tid;

	if (!id)
		return;
	u = bpf_map_lookup_elem(&units, &id);
	if (!u)
		return;
	tid = u->tid;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th && th->born == u->born)
		unit_drop(id, th);
	else
		bpf_map_delete_elem(&units, &id);
}

/* Request id of thread tid (entry th) waits for connection c's call:
 * its unit, held by c; false if none was taken. Taken back if the
 * request was answered meanwhile (by another thread: the answer drops
 * only a unit it sees counted). */
static __always_inline bool unit_take(struct tcp_conn *c, struct tcp_thread *th,
				      __u32 tid, __u64 id)
{
	struct tcp_unit u = { .tid = tid, .born = th->born };
	__u64 was;

	if (c->unit_id || bpf_map_update_elem(&units, &id, &u, BPF_NOEXIST))
		return false;
	/* Fetching: the look at th->id below stays after it. */
	was = __sync_fetch_and_add(&th->waiting, 1);
	barrier_var(was);
	c->unit_id = id;
	if (still_served(th, id))
		return true;
	unit_release(c);
	return false;
}

/* The request server connection c's thread reads more of: it no longer
 * waits for its body, if it did. */
static __always_inline void body_wait_end(struct tcp_conn *c)
{
	if (c->unit_id)
		unit_release(c);
}

/* Server connection c's request, just begun by thread tid's read of
 * its head alone (a body promised, struct tcp_req_head's body_after),
 * waits for its own body: a unit held by c until c is read again (the
 * body) or the request is answered (link_answered drops it). A loop's
 * other requests may run their handlers meanwhile. */
static __always_inline void body_wait_begin(struct tcp_conn *c, __u32 tid)
{
	struct tcp_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 id = c->id;

	body_wait_end(c); /* a unit left by the request before */
	if (!th || bpf_map_update_elem(&bodies, &id, &tid, BPF_ANY))
		return;
	c->body_waited = 1;
	/* Stored before th->id is looked at: an answer (a close on another
	 * CPU) clears th->id first, then the entry, so one of the two
	 * sides sees the other. */
	if (KMON_READ_ONCE(th->id) != id) {
		bpf_map_delete_elem(&bodies, &id);
		return;
	}
	unit_take(c, th, tid, id);
}

/* The request connection c was opened for, if it still waits for the
 * connection's first call: unanswered, its unit still there. */
static __always_inline __u64 opened_for(const struct tcp_conn *c)
{
	__u64 id = c->connect_parent;

	if (!c->fresh || !id || c->unit_id != id ||
	    !bpf_map_lookup_elem(&units, &id))
		return 0;
	return id;
}

#endif
