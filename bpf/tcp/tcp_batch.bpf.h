/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request events in batches, for tcp.bpf.c: each CPU gathers up to
 * TCP_BATCH of them and sends them as one ring record. A record of its
 * own per event cost several times the event's copy: the ring's lock,
 * its header and commit, and the ring's cold lines written an event at a
 * time. User space sends what the batches hold before each report
 * (tcp_send_batches), so an event waits at most an interval, as it may
 * in the ring.
 *
 * A batch is taken with a compare and swap on busy, never waited for: a
 * program of ours that finds it taken (one it interrupted on this CPU,
 * or user space's send) sends its event on its own, as do events whose
 * user-space handling looks at state that later events change (an
 * undecided protocol's verdict, a TLS server name by cookie): those keep
 * their place in the ring. */
#ifndef KMON_TCP_BATCH_BPF_H
#define KMON_TCP_BATCH_BPF_H

#include "tcp.h"
#include "tcp_state.bpf.h"

/* Set before load: batches are sent by user space (its kernel runs
 * tcp_send_batches); else every event is a record. */
const volatile bool batch_events;
const volatile __u32 batch_cpus; /* possible CPUs */

struct tcp_batch {
	__u64 busy; /* 1: taken */
	__u64 n;
	struct tcp_event ev[TCP_BATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcp_batch);
} tcp_batches SEC(".maps");

/* Sends a taken batch's events, if any, as one record. */
static __always_inline void batch_send(struct tcp_batch *b)
{
	__u64 n = b->n, *lost;
	__u32 stat = TCP_RB_LOST;

	if (!n)
		return;
	if (n > TCP_BATCH)
		n = TCP_BATCH;
	b->n = 0;
	if (!bpf_ringbuf_output(&tcp_events, b->ev, n * sizeof(b->ev[0]),
				wakeup_flags()))
		return;
	lost = bpf_map_lookup_elem(&tcp_stats, &stat);
	if (lost)
		__sync_fetch_and_add(lost, n);
}

/* Adds c's finished request to this CPU's batch; false when the event
 * is to be a record of its own. */
static __always_inline bool batch_event(const struct tcp_conn *c, __u64 latency)
{
	__u32 zero = 0, proto = proto_slot(c);
	struct tcp_batch *b;

	if (!batch_events || proto == TCP_PROTO_UNDECIDED || proto == PROTO_TLS)
		return false;
	b = bpf_map_lookup_elem(&tcp_batches, &zero);
	if (!b || __sync_val_compare_and_swap(&b->busy, 0, 1))
		return false;
	fill_event(&b->ev[b->n & (TCP_BATCH - 1)], c, latency);
	if (++b->n >= TCP_BATCH)
		batch_send(b);
	__sync_lock_test_and_set(&b->busy, 0);
	return true;
}

static long send_cpu_batch(__u64 cpu, __u32 *busy)
{
	__u32 zero = 0;
	struct tcp_batch *b =
		bpf_map_lookup_percpu_elem(&tcp_batches, &zero, cpu);

	if (!b)
		return 0;
	if (__sync_val_compare_and_swap(&b->busy, 0, 1)) {
		(*busy)++;
		return 0;
	}
	batch_send(b);
	__sync_lock_test_and_set(&b->busy, 0);
	return 0;
}

/* Run by user space (BPF_PROG_TEST_RUN) before each report: sends every
 * CPU's batch. Returns how many were taken at that moment (run again). */
SEC("syscall")
int tcp_send_batches(void *ctx)
{
	__u32 busy = 0;

	bpf_loop(batch_cpus, send_cpu_batch, &busy, 0);
	return busy;
}

#endif
