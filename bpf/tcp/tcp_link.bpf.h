/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request paths, for tcp.bpf.c: each request (either side) gets an id
 * when it starts, and a client call gets a parent when the evidence
 * names exactly one server request it is made for.
 *
 * The evidence is the thread: the thread that read a server request and
 * has not yet begun its response serves it. Each thread that reads
 * requests keeps how many it read whose response has not begun
 * (serving) and the id of the last one it read. A call sent by a thread
 * serving exactly one request is that request's child, if that one is
 * the last the thread read; when the last one is answered before an
 * older one (an event loop), the one left is unknown and calls stay
 * unlinked. A thread serving nothing or several requests makes calls
 * with no parent: counted per service (links), never guessed.
 *
 * The count of a request is released by whichever thread begins its
 * response (a pool's worker may answer what another thread read), or
 * by the close of a connection whose request was never answered (or by
 * its reader, when that close ran on another CPU as it read).
 *
 * Fan-out in parallel threads: a thread created (sched_process_fork) by
 * a thread serving exactly one request, or by a thread so created,
 * serves that request too, as long as its creator still serves it alone
 * and it reads no request of its own (link "spawn"). The creator is
 * looked at again at each call: a pool's thread created for an earlier
 * request never takes a later one's.
 *
 * A thread serving several (an event loop) links a call by its handler
 * (tcp_handler.bpf.h): to the request it read right before opening the
 * call's connection (link "connect", the connection's first call) or
 * right before sending the call on a connection that served calls
 * before (link "inline"). */
#ifndef KMON_TCP_LINK_BPF_H
#define KMON_TCP_LINK_BPF_H

#include "tcp.h"
#include "tcp_load.h" /* TCP_LOAD_CLOSED_MARK */
#include "tcp_handler.bpf.h"

/* Set before load (user space): the node's bits of every id, and how
 * many bits of a serial name the CPU that made it. */
const volatile __u64 id_prefix;
const volatile __u32 id_cpu_bits;

/* Per CPU: the next serial (ids made on one CPU never meet another's). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} id_next SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TCP_MAX_LINK_SVCS);
	__type(key, __u32);
	__type(value, struct tcp_links);
} links SEC(".maps");

static __always_inline __u64 next_id(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&id_next, &zero), serial;

	if (!n)
		return 0;
	/* Atomic: a program in softirq may interrupt one on this CPU. */
	serial = __sync_fetch_and_add(n, 1) << id_cpu_bits |
		 bpf_get_smp_processor_id();
	return id_prefix | (serial & TCP_ID_SERIAL_MASK);
}

/* A request (either side) begins: its id, no parent yet. All that is
 * done with paths off (collectors.tcp.paths: false): the records keep
 * their ids, and no thread is looked up. */
static __always_inline void link_none(struct tcp_conn *c)
{
	c->id = next_id();
	c->parent = 0;
	c->link = TCP_LINK_NONE;
}

/* Its response begins, or its connection closed unanswered. */
static __always_inline void link_answered(struct tcp_conn *c)
{
	struct tcp_thread *th;
	__u32 tid = c->tid;

	if (!__sync_lock_test_and_set(&c->holds_thread, 0))
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	/* The id first, then the body's entry: a call in between sees no
	 * parent rather than this one, answered. */
	if (th)
		__sync_val_compare_and_swap(&th->id, c->id, 0);
	if (c->body_waited) {
		c->body_waited = 0;
		bpf_map_delete_elem(&bodies, &c->id);
	}
	if (!th)
		return;
	/* Its wait ends before it leaves serving: the two counts may tell
	 * the handlers that could run as fewer than they are, never more. */
	if (KMON_READ_ONCE(th->waiting))
		unit_drop(c->id, th);
	/* An entry made again after the LRU dropped it starts at zero. */
	if (th->serving)
		__sync_fetch_and_add(&th->serving, -1);
}

/* A server request begins (c->tid read its first bytes). */
static __always_inline void link_request(struct tcp_conn *c)
{
	struct tcp_thread fresh = {}, *th;
	__u32 tid = c->tid;

	link_none(c);
	fresh.born = c->id;
	th = lookup_or_try_init(&threads, &tid, &fresh);
	if (!th)
		return;
	if (__sync_fetch_and_add(&th->serving, 1) && !th->loop)
		th->loop = 1;
	th->id = c->id;
	th->from_id = 0; /* it serves its own now */
	/* Held only once counted: a close that takes it back finds the
	 * count to release. */
	__sync_lock_test_and_set(&c->holds_thread, 1);
	/* The close may have passed since this program found the
	 * connection (a reset's, on another CPU), releasing nothing: no
	 * release would come, and the thread would serve it for good (its
	 * later calls unlinked). The close marks load_open whatever the
	 * load. Each side swaps before it reads the other's: one of the
	 * two sees the other, and the swap in link_answered lets one
	 * release. */
	if (KMON_READ_ONCE(c->load_open) == TCP_LOAD_CLOSED_MARK)
		link_answered(c);
}

/* id when thread tid serves it and nothing else, else 0. */
static __always_inline __u64 serving_alone(__u32 tid, __u64 id)
{
	struct tcp_thread *th = bpf_map_lookup_elem(&threads, &tid);

	if (!th || KMON_READ_ONCE(th->serving) != 1 ||
	    KMON_READ_ONCE(th->id) != id)
		return 0;
	return id;
}

/* A thread or process is created: a lookup of the creator, and the
 * child's entry made or deleted. Deleted also when the creator has none
 * (most serve nothing kmond follows): an entry a thread that exited left
 * under this tid must not speak for the new one. */
static __always_inline int handle_fork(__u32 parent, __u32 child)
{
	struct tcp_thread *p = bpf_map_lookup_elem(&threads, &parent);
	struct tcp_thread kid = {};
	__u64 serving;

	if (!p) {
		bpf_map_delete_elem(&threads, &child);
		return 0;
	}
	serving = KMON_READ_ONCE(p->serving);
	if (serving == 1) {
		kid.from = parent;
		kid.from_id = KMON_READ_ONCE(p->id);
	} else if (!serving) { /* created by a thread so created */
		kid.from = p->from;
		kid.from_id = p->from_id;
	}
	if (kid.from_id)
		bpf_map_update_elem(&threads, &child, &kid, BPF_ANY);
	else
		bpf_map_delete_elem(&threads, &child);
	return 0;
}

/* The parent of a call on connection c by thread tid (entry th), by
 * the handler rules, when the thread and spawn rules found none: the
 * request its connection was opened for (its first call), or the one
 * the thread read right before (a later call). */
static __always_inline void link_by_handler(struct tcp_conn *c,
					    struct tcp_thread *th, __u32 tid,
					    __u64 opened)
{
	if (opened) {
		c->parent = opened;
		c->link = TCP_LINK_CONNECT;
	} else if (th && !c->fresh) {
		c->parent = handler_request(th, tid);
		c->link = TCP_LINK_INLINE;
	}
}

/* A call on c made right after the thread read request id, linked or
 * not: whoever made it waits for its answer (the rule's assumption: a
 * handler that waits for a call makes no other), and counts as request
 * id's wait. Calls take it in event loops only (threads that served
 * several at once), where it is needed; connects, rarer, always: the
 * first requests a loop serves open its connections. */
static __always_inline bool call_waits(struct tcp_conn *c,
				       struct tcp_thread *th, __u32 tid,
				       __u64 id, bool always)
{
	return id && th && (always || th->loop) && unit_take(c, th, tid, id);
}

/* A client call begins, sent by the current thread. */
static __always_inline void link_call(struct tcp_conn *c)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 svc = c->svc < TCP_MAX_LINK_SVCS ? c->svc : 0;
	struct tcp_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 opened = opened_for(c);
	struct tcp_links *l;

	/* the unit of the call before, never answered; a connect's is
	 * its first call's */
	if (!c->fresh)
		unit_release(c);
	link_none(c);
	if (th && KMON_READ_ONCE(th->serving) == 1) {
		c->parent = KMON_READ_ONCE(th->id);
		c->link = TCP_LINK_THREAD;
		/* opened for another: one of the two is wrong */
		if (opened && opened != c->parent)
			c->parent = 0;
	} else if (th && !KMON_READ_ONCE(th->serving) && th->from_id) {
		c->parent = serving_alone(th->from, th->from_id);
		c->link = TCP_LINK_SPAWN;
	} else {
		link_by_handler(c, th, tid, opened);
	}
	call_waits(c, th, tid, step_last_read(tid), false);
	c->fresh = 0;
	c->connect_parent = 0;
	if (!c->parent)
		c->link = TCP_LINK_NONE;
	l = bpf_map_lookup_elem(&links, &svc);
	if (!l)
		return;
	/* Per CPU, and calls are sent in process context only. */
	if (c->parent)
		l->linked++;
	else
		l->unlinked++;
}

/* Thread tid opens connection c (connect(), in its context): the
 * request its handler runs, if known, is its first call's parent (the
 * unit tells whether it still waits for that call). */
static __always_inline void link_connect(struct tcp_conn *c)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 read = step_last_read(tid), id;
	struct tcp_thread *th;

	c->fresh = 1;
	if (!read)
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	id = th ? handler_request(th, tid) : 0;
	step_other();
	if (call_waits(c, th, tid, read, true) && id)
		c->connect_parent = id;
}

#endif
