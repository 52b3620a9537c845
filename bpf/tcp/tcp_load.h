/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Measured load of each monitored server, and of each endpoint monitored
 * callers call (`load` records): the ABI of the accumulators tcp.bpf.c
 * keeps (see tcp_load.bpf.h).
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

#include "../histogram.h"

/* Servers and endpoints called together. */
#define TCP_MAX_LOADS 2048

/* Client side: the endpoint a monitored caller calls, whose load is
 * that of every call to it from this host. */
struct tcp_call_key {
	__u8 addr[16];
	__u16 port; /* host order */
	__u16 family;
};

/* Whose load: a server, its service or its pid when it has none (call
 * zero); or on the client side, an endpoint called (svc and pid 0, call
 * with a family). */
struct tcp_load_key {
	__u32 svc;
	__u32 pid; /* 0 when svc names it */
	struct tcp_call_key call;
	__u32 pad;
} __attribute__((aligned(8))); /* compared a word at a time */

/* The accumulators are an array, a slot per server or endpoint:
 * load_slots (a hash) gives a key's slot and each connection keeps it,
 * so a request's start and end find their accumulators without a hash
 * lookup. Free slots wait in load_free (a queue): user space puts them
 * all there at start, and each slot of a key it forgets, zeroed an
 * interval later (a program that found the slot just before may still
 * add to it). */
struct tcp_load {
	struct tcp_load_key key; /* the slot's owner; all 0: free */
	/* A writer's last add is 1 to exactly one of these four, and its
	 * first is to begun (in begun_n): a copy whose begun equals their sum
	 * (tcp_load_whole) and that equals the next copy holds no half-done
	 * change. */
	__u64 arrivals;
	__u64 completions; /* first byte of the response sent */
	__u64 unanswered; /* ended by their close, unanswered */
	__u64 extended; /* ends moved later by more response bytes */
	__u64 area; /* signed: sum of ends minus sum of starts, ns */
	__u64 busy; /* signed: sum of idle->busy minus busy->idle */
	__u64 latency_sum; /* ns, of completed requests */
	__u64 idle_since; /* when in_progress last fell to 0 */
	/* begun << 32 + in_progress (signed), one word: a start or an end
	 * moves both with one atomic add, which also returns the number in
	 * progress before it (TCP_LOAD_START, TCP_LOAD_END). Each atomic was
	 * 4 ns of a request's time here, and there were seven at an end. */
	__u64 begun_n;
	/* The largest in_progress of an interval, one per parity of the
	 * interval number user space writes into load_epoch: the number's
	 * low 32 bits << 32 | the largest, so a value an earlier interval
	 * left says nothing of this one and needs no reset. */
	__u64 max[2];
	/* Requests whose outcome the kernel read (bpf/tcp/outcome.h) as they
	 * finished, and the failed ones: counts apart from the sums above. */
	__u64 outcomes;
	__u64 errors;
};

#define TCP_LOAD_BEGIN (1ULL << 32) /* begun + 1 */
#define TCP_LOAD_START (TCP_LOAD_BEGIN + 1) /* and in_progress + 1 */
#define TCP_LOAD_END (TCP_LOAD_BEGIN - 1) /* and in_progress - 1 */

/* The number in progress in begun_n, a signed count widened to 64 bits
 * (a count gone below zero by a reload's lost ends reads huge). */
static inline __u64 tcp_load_in_progress(__u64 begun_n)
{
	return (__u64)(__s64)(__s32)begun_n;
}

/* Whether a copy of v holds no change a writer was making (modulo
 * 2^32, begun's width). */
static inline int tcp_load_whole(const struct tcp_load *v)
{
	__u32 begun =
		(__u32)((v->begun_n - tcp_load_in_progress(v->begun_n)) >> 32);

	return begun == (__u32)(v->arrivals + v->completions + v->unanswered +
				v->extended);
}

#define TCP_LOAD_MAX_OF(v, epoch) \
	((__u32)((v) >> 32) == (__u32)(epoch) ? (__u32)(v) : 0)

/* An occupancy target (user/collectors/occupancy.h): a service seen from
 * its server side (svc, call zero) or an endpoint seen from its callers
 * (svc 0). User space makes the entries, each with a slot of its own in
 * the per-target arrays below. */
#define TCP_MAX_TARGETS 64

struct tcp_target_key {
	__u32 svc;
	struct tcp_call_key call;
};

struct tcp_target {
	__u32 slot; /* < TCP_MAX_TARGETS */
	__u32 pad;
};

/* A target's response times, cumulative like tcp_load: all of them, and
 * by the number of requests in progress at arrival for the two-tier fit
 * (user/collectors/occupancy_given_n.h). */
#define TCP_LOAD_GIVEN_N 64
#define TCP_LOAD_SQ_SHIFT 10 /* squares of (ns >> 10): 73 min per request */

struct tcp_target_data {
	__u64 count[TCP_LOAD_GIVEN_N]; /* completed, found n in progress */
	__u64 sum_ns[TCP_LOAD_GIVEN_N]; /* their latencies */
	__u64 sum_sq[TCP_LOAD_GIVEN_N]; /* (latency >> TCP_LOAD_SQ_SHIFT)^2 */
	__u64 empty[HIST_BUCKETS]; /* histogram.h buckets of n = 0 */
	__u64 all[HIST_BUCKETS]; /* of every completed request */
	__u64 steps; /* steps sent: the next one's seq */
};

/* Each change of a target's number in progress, while its budget for the
 * interval lasts (target_steps_left, user space sets it each interval):
 * the sequence the two-tier fit's likelihood is of
 * (user/collectors/occupancy_sequence.h). Numbered per target, so a step
 * the ring lost shows. 2 MiB: 65,536 steps (32 bytes with the ring's
 * header), 32 s of one target at 1000 requests a second, while user
 * space may be slow to drain. */
#define TCP_STEPS_BYTES (2 * 1024 * 1024)

struct tcp_load_step {
	__u64 t_ns; /* monotonic */
	__u32 seq; /* the target's steps before it, modulo 2^32 */
	__u16 n; /* in progress after it (65535: that many or more) */
	__u8 slot;
	__s8 delta; /* +1 a request began, -1 one ended */
	/* An end's own response time, from its request's start on its
	 * connection, ns >> TCP_LOAD_SQ_SHIFT (0 for a start): what the
	 * order of departures is checked against (occupancy_order.h). */
	__u32 own;
	__u32 pad;
};

/* tcp_conn.load_open */
#define TCP_LOAD_NOT_OPEN 0
#define TCP_LOAD_IS_OPEN 1
#define TCP_LOAD_CLOSED_MARK 2 /* the close passed: nothing more begins */

/* tcp_conn.load_state: where a request (a call) is in the load. */
enum tcp_load_state {
	TCP_LOAD_NONE, /* none in the load: none seen yet, load off at
			  * its start, or no slot for it */
	TCP_LOAD_OPEN, /* in progress */
	TCP_LOAD_SENT, /* response begun: ended, more bytes extend it */
	TCP_LOAD_CLOSED, /* closed unanswered: ended, not completed */
};

#endif
