/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Measured load of each monitored server (`load` records): the ABI of
 * the per-service accumulators tcp.bpf.c keeps (see tcp_load.bpf.h).
 *
 * Every field is cumulative and changed only by atomic adds, so the
 * plain tracepoints and raw_tp (where bpf_spin_lock is refused) share the
 * code with tp_btf. Integrals over time are kept as sums of signed
 * timestamps: a request that starts at s subtracts s from area, one that
 * ends at e adds e, so at any time t
 *	area(t) = area + in_progress * t	(request-ns in progress)
 *	busy(t) = busy + (in_progress > 0) * t	(ns with one or more)
 * and user space takes the difference of two reads. */
#ifndef KMON_TCP_LOAD_H
#define KMON_TCP_LOAD_H

#include "histogram.h"

#define TCP_MAX_LOADS 1024

/* A server: its service, or its pid when it has none. */
struct tcp_load_key {
	__u32 svc;
	__u32 pid; /* 0 when svc names it */
};

/* The accumulators are an array, a slot per server: load_slots (a hash)
 * gives a server's slot and each connection keeps it, so a request's
 * start and end find their server without a hash lookup. Free slots wait
 * in load_free (a queue): user space puts them all there at start, and
 * each slot of a server it forgets, zeroed. */
struct tcp_load {
	struct tcp_load_key key; /* the slot's server; 0, 0: free */
	/* Writers add 1 to begun before their first change and to ended
	 * after their last: a copy with begun == ended that equals the next
	 * copy is consistent. */
	__u64 ended;
	__u64 arrivals;
	__u64 completions; /* first byte of the response sent */
	__u64 in_progress; /* signed, as a u64 */
	__u64 area;	   /* signed: sum of ends minus sum of starts, ns */
	__u64 busy;	   /* signed: sum of idle->busy minus busy->idle */
	__u64 latency_sum; /* ns, of completed requests */
	__u64 idle_since;  /* when in_progress last fell to 0 */
	__u64 begun;
	/* The largest in_progress of an interval, one per parity of the
	 * interval number user space writes into load_epoch: the number's
	 * low 32 bits << 32 | the largest, so a value an earlier interval
	 * left says nothing of this one and needs no reset. */
	__u64 max[2];
};

#define TCP_LOAD_MAX_OF(v, epoch) \
	((__u32)((v) >> 32) == (__u32)(epoch) ? (__u32)(v) : 0)

/* Response times by the number of requests in progress at arrival, for
 * the occupancy fit (user/collectors/occupancy_given_n.h): kept only for
 * the servers whose key user space puts in load_given_n (the occupancy
 * targets), cumulative like tcp_load. */
#define TCP_LOAD_GIVEN_N 64
#define TCP_MAX_GIVEN_N 64
#define TCP_LOAD_SQ_SHIFT 10 /* squares of (ns >> 10): 73 min per request */

struct tcp_load_given_n {
	__u64 count[TCP_LOAD_GIVEN_N];	/* completed, found n in progress */
	__u64 sum_ns[TCP_LOAD_GIVEN_N];	/* their latencies */
	__u64 sum_sq[TCP_LOAD_GIVEN_N]; /* (latency >> TCP_LOAD_SQ_SHIFT)^2 */
	__u64 empty[HIST_BUCKETS];	/* histogram.h buckets of n = 0 */
};

/* tcp_conn.load_state: where a server request is in the load. */
enum tcp_load_state {
	TCP_LOAD_NONE,	 /* no request seen yet */
	TCP_LOAD_OPEN,	 /* in progress */
	TCP_LOAD_SENT,	 /* response begun: ended, more bytes extend it */
	TCP_LOAD_CLOSED, /* closed unanswered: ended, not completed */
};

#endif
