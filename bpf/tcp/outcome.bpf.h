/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request outcomes, the kernel side (included by tcp.bpf.c; the rules
 * are in outcome.h, shared with user space; docs/design/outcomes.md).
 *
 * Whether a request succeeded is in its response's first bytes, its
 * method and route in the request's: the first bytes of every message
 * (TCP_REQ_HEAD of a request, TCP_RESP_HEAD of a response) are kept in
 * its connection's state, where they go by anyway:
 * what a socket receives at the cgroup ingress program protocol
 * identification already runs (proto.bpf.h), what it sends at the send's
 * entry (tcp_sendmsg_locked) from the sender's own buffer, or at the
 * egress program where that tracepoint is missing.
 *
 * Where a message begins is the request model's to say (tcp.bpf.c), and
 * it says so only when the owner reads or writes it, after the bytes went
 * by: the next request may even be in before the last one finished. So
 * the connection keeps the first bytes of the last request and of the
 * last response begun, with their sequence numbers (next_req,
 * next_resp), and the request model takes them when a request or a
 * response begins at that very byte (head_request, head_response); any
 * other bytes are not its: the request has no head, and no outcome.
 * A segment (or a send) begins a message when the acknowledgement it
 * carries moved since the last one: its sender has heard from the other
 * end since, an answer in a request-response protocol (on plain HTTP/2,
 * and its frames past the control ones are not DATA alone:
 * h2_head_may_begin).
 *
 * At its end a request of a decided protocol counts on its edge and its
 * load by outcome; one still undecided, or gRPC's (grpc_mark), goes to
 * user space, which counts it once it has the verdict, or reads its
 * grpc-status (struct tcp_outcome_late). */
#ifndef KMON_OUTCOME_BPF_H
#define KMON_OUTCOME_BPF_H

#include "outcome.h"
#include "proto.h"
#include "tcp_state.bpf.h"
#include "tcp_load.bpf.h"
#include "send_buffer.bpf.h"
#include "h2.bpf.h"
#include "body_after.bpf.h"

/* collectors.tcp.outcomes, written by user space (start and reloads). */
volatile __u32 outcomes_on;
/* And records may be written (collectors.tcp.requests is not none): a
 * request's head only makes their method and route; the counts by
 * outcome read the response's alone. */
volatile __u32 request_heads_on;

/* Whether c's messages are worth their first bytes: its protocol has
 * outcomes kmond reads, or it is not decided yet. */
static __always_inline bool outcome_wanted(const struct tcp_conn *c)
{
	if (!KMON_READ_ONCE(outcomes_on))
		return false;
	if (c->proto_state != PROTO_DECIDED)
		return true;
	switch (c->proto) {
	case PROTO_TLS:
	case PROTO_SSH:
	case PROTO_UNKNOWN:
		return false;
	}
	return true;
}

/* Whether c's request heads are kept: for records (their method and
 * route), and on HTTP/2 for the counts too: a response's status is its
 * request's only on the stream the request head opens. */
static __always_inline bool req_head_wanted(const struct tcp_conn *c)
{
	return KMON_READ_ONCE(request_heads_on) ||
	       c->proto_state != PROTO_DECIDED || c->proto == PROTO_HTTP2;
}

/* Whether a message leaving in direction dir (ack: the acknowledgement
 * it carries, or would) begins a new one; notes the acknowledgement. */
static __always_inline bool head_begins(struct tcp_conn *c, __u8 dir, __u32 ack)
{
	dir &= 1;
	if (c->head_acked[dir] && c->head_ack[dir] == ack)
		return false;
	c->head_ack[dir] = ack;
	c->head_acked[dir] = 1;
	return true;
}

/* The bytes to keep of len: 1 .. size (a power of two up to 128, or
 * less), as the verifier sees it (at most the next power of two: the
 * heads lie inside the connection's state). */
static __always_inline __u32 head_cap(__u32 len, __u32 size)
{
	__u32 cap = (len < size ? len : size) - 1;

	asm volatile("%[cap] &= 127" : [cap] "+r"(cap));
	return cap + 1;
}

/* Whether what goes in direction dir on c is a request (client to
 * server; an accepted socket not yet read is a server's). */
static __always_inline bool head_is_request(const struct tcp_conn *c, __u8 dir)
{
	return (c->role == TCP_ROLE_CLIENT) == (dir == PROTO_DIR_OUT);
}

/* The heads the cgroup programs write (next_req, next_resp) are copied by
 * the owner's programs on another CPU, maybe while a later segment's head
 * is written over them (a pipelining client's next request, the next
 * response to an asynchronous one): such a copy would mix two messages'
 * bytes under one sequence number. So a writer clears len first and sets
 * it last, and a copy is kept only if the head still has the len and the
 * sequence number it was copied with (head_copy). head_fence orders the
 * steps on each side: x86 keeps stores in order and loads in order, so
 * the compiler's order is enough; arm64 keeps neither, and sk_order's
 * fetching atomic (tcp_state.bpf.h) is a full barrier. Adding 0 to users
 * changes nothing. */
static __always_inline void head_fence(struct tcp_conn *c)
{
#if defined(__TARGET_ARCH_arm64)
	sk_order(&c->users, 0);
#else
	asm volatile("" ::: "memory");
#endif
}

/* A received (dir in) or sent (dir out, egress) segment with payload at
 * off, sequence number seq, acknowledgement ack. */
static __always_inline void head_from_skb(struct __sk_buff *skb,
					  struct tcp_conn *c, __u8 dir,
					  __u32 off, __u32 seq, __u32 ack)
{
	bool request = head_is_request(c, dir);
	__u32 len = skb->len - off, cap, skip = 0;

	/* checked before the state is written: the segment is handled on
	 * another CPU than the owner's, and a written line goes to that
	 * CPU and back (140 ns a request on nginx) */
	if ((request && !req_head_wanted(c)) || !outcome_wanted(c))
		return;
	/* HTTP/2's control frames begin no message (h2.bpf.h) */
	if (h2_segment(skb, c, dir, off, len, seq, &skip))
		return;
	/* nor does a segment of DATA going on one; its acknowledgement is
	 * that message's (a trailer's HEADERS at the same one goes on it
	 * too) */
	if (!h2_head_may_begin(skb, c, off + skip)) {
		head_begins(c, dir, ack);
		return;
	}
	if (!head_begins(c, dir, ack))
		return;
	off += skip;
	len -= skip;
	if (request) {
		c->next_req.len = 0; /* being written (head_fence) */
		head_fence(c);
		cap = head_cap(len, TCP_REQ_HEAD);
		if (bpf_skb_load_bytes(skb, off, c->next_req.data, cap))
			cap = 0;
		c->next_req.seq = seq;
		c->next_req.body_after = body_after(
			skb, c, dir, true, c->next_req.data, cap, off, len);
		head_fence(c);
		c->next_req.len = cap;
		return;
	}
	c->next_resp.len = 0;
	head_fence(c);
	cap = head_cap(len, TCP_RESP_HEAD);
	if (bpf_skb_load_bytes(skb, off, c->next_resp.data, cap))
		cap = 0;
	c->next_resp.seq = seq;
	c->next_resp.body_after = body_after(skb, c, dir, false,
					     c->next_resp.data, cap, off, len);
	head_fence(c);
	c->next_resp.len = cap;
}

/* Whether a server's send on c may be a response: a request was read,
 * or a TLS read that may be one is held (a flush may have ended the
 * response before it). A send before is no response's (an HTTP/2
 * server's SETTINGS as the connection starts, maybe after the request
 * came in): its head would take the request's ack, and the response's
 * own, sent at the same ack, would not begin (head_begins). */
static __always_inline bool server_send_answers(const struct tcp_conn *c)
{
	return c->phase != TCP_IDLE || c->tls_held;
}

/* A send begins (its first chunk, tcp_sendmsg_locked): base holds the
 * first avail bytes of it. */
static __always_inline void head_from_send(const struct sock *sk,
					   struct tcp_conn *c, const void *base,
					   __u32 avail)
{
	bool request = head_is_request(c, PROTO_DIR_OUT);
	const struct tcp_sock *tp;
	__u32 cap;

	/* (reached with outcomes off on HTTP/2 connections: send_head) */
	if ((request && !req_head_wanted(c)) || !outcome_wanted(c))
		return;
	if (!request && !server_send_answers(c))
		return;
	tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!tp || !head_begins(c, PROTO_DIR_OUT, tp->rcv_nxt))
		return;
	if (request) {
		cap = head_cap(avail, TCP_REQ_HEAD);
		if (!base || !avail ||
		    bpf_probe_read_user(c->next_req.data, cap, base))
			cap = 0;
		c->next_req.seq = tp->write_seq;
		c->next_req.len = cap;
		c->next_req.body_after = 0;
		return;
	}
	cap = head_cap(avail, TCP_RESP_HEAD);
	if (!base || !avail ||
	    bpf_probe_read_user(c->next_resp.data, cap, base))
		cap = 0;
	c->next_resp.seq = tp->write_seq;
	c->next_resp.len = cap;
	c->next_resp.body_after = 0;
}

/* An HTTP/2 send from several buffers (a writev) begins: whether it is
 * control frames only, and a response's head past them. A request's
 * head is not gathered (128 bytes are too many for the stack): none. */
static __always_inline void h2_writev_head(const struct sock *sk,
					   struct tcp_conn *c,
					   const struct iov_iter *it)
{
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	struct h2_iovs_buf b = {};
	struct h2_iovs v = {};
	__u32 skip, got;

	h2_iovs_of(it, &v);
	skip = h2_control_iovs(&v, &b);
	c->ctl_send = skip >= v.total && v.total == it->count;
	if (!tp || c->ctl_send || head_is_request(c, PROTO_DIR_OUT) ||
	    !server_send_answers(c) || !outcome_wanted(c) ||
	    !head_begins(c, PROTO_DIR_OUT, tp->rcv_nxt))
		return;
	got = h2_iovs_read(&v, skip, &b, TCP_RESP_HEAD);
	__builtin_memcpy(c->next_resp.data, b.b, TCP_RESP_HEAD);
	c->next_resp.seq = tp->write_seq;
	c->next_resp.len = got;
	c->next_resp.body_after = 0;
}

/* A send on c begins: its first chunk (tcp_sendmsg_locked fires per
 * chunk; a later one starts inside the buffer). */
static __always_inline void
send_head(const struct sock *sk, const struct msghdr *msg, struct tcp_conn *c)
{
	const struct iov_iter *it = &msg->msg_iter;
	const struct iovec *iov;
	const void *base;
	__u32 avail, skip;

	if (it->iov_offset || !it->count)
		return;
	base = send_base(it, it->count, &avail, &iov);
	if (iov && avail < it->count && h2_known(c)) {
		h2_writev_head(sk, c, it);
		return;
	}
	/* HTTP/2's control frames: no message, and not in the head */
	skip = h2_send_begins(c, base, avail);
	if (c->ctl_send && avail < it->count)
		c->ctl_send = 0; /* more than the first buffer: not known */
	if (c->ctl_send || skip >= avail)
		return;
	head_from_send(sk, c, base + skip, avail - skip);
}

/* *to = *from when from is the head of the message that begins at seq
 * and is not written over meanwhile (head_fence); else to holds none.
 * A macro: the request's and the response's heads differ in size. */
#define head_copy(c, to, from, seq)                                           \
	do {                                                                  \
		__u16 copied = 0;                                             \
		if ((from)->len && (from)->seq == (seq)) {                    \
			head_fence(c);                                        \
			*(to) = *(from);                                      \
			copied = (to)->len;                                   \
			head_fence(c);                                        \
		}                                                             \
		if (!copied || (from)->len != copied || (from)->seq != (seq)) \
			(to)->len = (to)->body_after = 0;                     \
	} while (0)

/* The request's head: the last request begun, when that began at seq. */
static __always_inline void request_head_at(struct tcp_conn *c, __u32 seq)
{
	head_copy(c, &c->req_head, &c->next_req, seq);
}

/* A request (call) begins at seq; its response is not in yet. */
static __always_inline void head_request(struct tcp_conn *c, __u32 seq)
{
	request_head_at(c, seq);
	c->resp_head.len = c->resp_head.body_after = 0;
}

/* Its response begins at seq. */
static __always_inline void head_response(struct tcp_conn *c, __u32 seq)
{
	head_copy(c, &c->resp_head, &c->next_resp, seq);
}

/* The request ends (in its response: req_seq and resp_seq are its
 * own). A head the egress program took after its send returned (where
 * it reads the sends: a segment held back by the congestion window or
 * Nagle, sent at a later ack) is there by now; a later message's head,
 * if any, does not begin at its sequence number. */
static __always_inline void heads_late(struct tcp_conn *c)
{
	if (!c->req_head.len)
		request_head_at(c, c->req_seq);
	if (!c->resp_head.len)
		head_response(c, c->resp_seq);
}

/* The HTTP/2 stream a request head opens (0: not shown), a global
 * function for the same reason as outcome_of_head. */
__noinline __u32 request_stream_of(const struct tcp_req_head *req)
{
	if (!req)
		return 0;
	return outcome_h2_request_stream(req->data, req->len);
}

/* What a response head says, for protocol proto: a global function,
 * verified once on its own. The rules of every protocol inlined at each
 * request's end would multiply the paths the verifier walks, past its
 * limit. req: the request's head (HTTP/2's stream). */
__noinline int outcome_of_head(struct outcome *o, const struct tcp_resp_head *h,
			       const struct tcp_req_head *req, __u32 proto,
			       __u32 side)
{
	__u32 len, stream = 0;

	if (!o || !h)
		return 0;
	if (proto == PROTO_HTTP2)
		stream = request_stream_of(req);
	len = h->len;
	if (len > OUTCOME_RESP_HEAD)
		len = OUTCOME_RESP_HEAD;
	outcome_classify(o, proto, side, h->data, len, stream);
	return 0;
}

static __always_inline void outcome_of(const struct tcp_conn *c, __u32 proto,
				       struct outcome *o)
{
	outcome_of_head(o, &c->resp_head, &c->req_head, proto,
			c->role == TCP_ROLE_CLIENT ? TCP_SIDE_CLIENT :
						     TCP_SIDE_SERVER);
}

static __always_inline void count_outcome(__u64 *outcomes, __u64 *errors,
					  const struct outcome *o)
{
	__sync_fetch_and_add(outcomes, 1);
	if (o->error)
		__sync_fetch_and_add(errors, 1);
}

/* Its load's counts, when the request is in one (tcp_load.bpf.h's
 * load_of, without making a slot). */
static __always_inline void outcome_load(const struct tcp_conn *c,
					 const struct outcome *o)
{
	__u32 slot = c->load_slot - 1; /* none: past the array */
	struct tcp_load *v = bpf_map_lookup_elem(&loads, &slot);

	if (v)
		count_outcome(&v->outcomes, &v->errors, o);
}

/* gRPC: an HTTP/2 connection whose outcome is its grpc-status, not its
 * :status (a failed call is answered 200). Every gRPC request and
 * response names the content type "application/grpc" (or its +proto,
 * +json forms), plain or Huffman-coded (its 88 bits: 11 bytes, whole);
 * HPACK sends it as a literal in a connection's first message each way
 * and from its dynamic table after: so a connection's first requests'
 * heads are looked at (a connection older than kmond is not marked). */
#define GRPC_MARK_REQUESTS 4
#define GRPC_PLAIN_LEN 16
#define GRPC_HUFF_LEN 11

/* "application/grpc" and its Huffman code, byte i of each (i < 16; the
 * code has 11): words, not arrays, which would go to .rodata. */
#define GRPC_PLAIN_LO 0x746163696c707061ULL
#define GRPC_PLAIN_HI 0x637072672f6e6f69ULL
#define GRPC_HUFF_LO 0x4c3d260d62d0751dULL
#define GRPC_HUFF_HI 0x64654dULL
#define GRPC_BYTE(lo, hi, i) \
	((__u8)((i) < 8 ? (lo) >> (8 * (i)) : (hi) >> (8 * ((i)-8))))

/* Whether the bytes at b are "application/grpc", plain (room: the bytes
 * left from b, at least GRPC_HUFF_LEN) or Huffman-coded. */
static __always_inline bool grpc_content_type(const __u8 *b, __u32 room)
{
	bool p = room >= GRPC_PLAIN_LEN, h = true;

#pragma unroll
	for (int i = 0; i < GRPC_HUFF_LEN; i++) {
		p = p && b[i] == GRPC_BYTE(GRPC_PLAIN_LO, GRPC_PLAIN_HI, i);
		h = h && b[i] == GRPC_BYTE(GRPC_HUFF_LO, GRPC_HUFF_HI, i);
		if (!p && !h)
			return false;
	}
	if (h)
		return true;
#pragma unroll
	for (int i = GRPC_HUFF_LEN; i < GRPC_PLAIN_LEN; i++)
		if (b[i] != GRPC_BYTE(GRPC_PLAIN_LO, GRPC_PLAIN_HI, i))
			return false;
	return true;
}

/* Whether the first len of the size bytes at data name gRPC's content
 * type. */
static __always_inline bool grpc_in(const __u8 *data, __u32 len, __u32 size)
{
	if (len > size)
		len = size;
	for (__u32 i = 0; i + GRPC_HUFF_LEN <= size; i++) {
		if (i + GRPC_HUFF_LEN > len)
			break;
		if (i + GRPC_PLAIN_LEN <= size &&
		    grpc_content_type(data + i, len - i))
			return true;
		if (i + GRPC_PLAIN_LEN > size &&
		    grpc_content_type(data + i, GRPC_HUFF_LEN))
			return true;
	}
	return false;
}

/* Whether c's request or response head names gRPC's content type. A
 * global function, verified once. */
__noinline int grpc_in_heads(const struct tcp_conn *c)
{
	if (!c)
		return 0;
	return grpc_in(c->req_head.data, c->req_head.len, TCP_REQ_HEAD) ||
	       grpc_in(c->resp_head.data, c->resp_head.len, TCP_RESP_HEAD);
}

/* At a request's end: marks c gRPC's when its heads say so (one of its
 * first requests, on HTTP/2). */
static __always_inline void grpc_mark(struct tcp_conn *c)
{
	if (c->grpc || c->requests >= GRPC_MARK_REQUESTS || !h2_known(c) ||
	    !outcome_wanted(c))
		return;
	c->grpc = grpc_in_heads(c);
}

/* A request whose outcome user space decides (undecided, or gRPC's):
 * its response head goes to it. proto: its slot (proto_slot). */
static __always_inline void outcome_late(const struct tcp_conn *c,
					 const struct tcp_edge *e, bool on_edge,
					 __u32 proto)
{
	struct tcp_outcome_late *l;

	l = bpf_ringbuf_reserve(&tcp_events, sizeof(*l), 0);
	if (!l) {
		stat_inc(&tcp_stats, TCP_RB_LOST);
		return;
	}
	__builtin_memset(l, 0, sizeof(*l));
	l->e = *e;
	l->cookie = c->proto_cookie;
	l->load_slot = c->load_slot;
	l->on_edge = on_edge;
	l->side = c->role == TCP_ROLE_CLIENT ? TCP_SIDE_CLIENT :
					       TCP_SIDE_SERVER;
	l->resp_head = c->resp_head;
	l->stream = request_stream_of(&c->req_head);
	l->grpc = c->grpc;
	l->proto = proto;
	bpf_ringbuf_submit(l, BPF_RB_NO_WAKEUP);
}

#endif
