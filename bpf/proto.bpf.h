/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Protocol identification, the kernel side (included by tcp.bpf.c: it
 * works on the tcp collector's connection state; see proto.h).
 *
 * What a socket receives is captured on the root cgroup's ingress: it
 * sees every segment with its payload readable by bpf_skb_load_bytes
 * wherever it lies (a received TCP segment's payload is in page
 * fragments, which the BTF tracepoint tcp_probe would make us chase by
 * hand, without the kernel's page_offset_base). What it sends is read
 * from the sender's own buffer at tcp_sendmsg_locked, once per send call
 * (the cgroup's egress, which sees every segment and ack, stands in where
 * that tracepoint is missing). A segment costs one socket-storage lookup;
 * only connections still undecided go further, and at most
 * PROTO_MAX_SEGS messages each way reach the ring. */
#ifndef KMON_PROTO_BPF_H
#define KMON_PROTO_BPF_H

#include "proto.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

/* Set before load: capture is on (the connection state lives in the
 * sockets, which is where these programs find it). */
const volatile bool proto_capture;

/* cookie -> verdict, written by user space. An LRU: the verdict of a
 * connection that closed before the kernel took it ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROTO_MAX_VERDICTS);
	__type(key, __u64);
	__type(value, struct proto_verdict);
} proto_verdicts SEC(".maps");

/* Bumped by user space after it wrote verdicts: a connection looks for
 * its verdict only when some came since it last looked (most short
 * connections never see one, and skip the lookup). */
volatile __u32 proto_verdict_gen;

/* Connections capturing (proto_state PROTO_CAPTURING), each counted
 * once (proto_counted): while there are none, a received segment costs
 * the ingress program no socket lookup. Never below the true number: a
 * connection is counted when its state is made, before its first data
 * segment, and uncounted once, when it stops capturing or its state is
 * removed; a socket freed without kmond's close leaves it above, which
 * costs only lookups. */
__u64 capturing;

static __always_inline void proto_count(struct tcp_conn *c)
{
	if (c->proto_state == PROTO_CAPTURING)
		count_once(&c->proto_counted, &capturing);
}

/* c stopped capturing, or its state goes. */
static __always_inline void proto_uncount(struct tcp_conn *c)
{
	uncount_once(&c->proto_counted, &capturing);
}

/* Takes the verdict user space left for c, if any. */
static __always_inline void proto_resolve(struct tcp_conn *c)
{
	struct proto_verdict *v;
	__u32 gen = proto_verdict_gen;
	__u64 cookie;

	if (c->proto_state != PROTO_CAPTURING &&
	    c->proto_state != PROTO_WAITING)
		return;
	if (!c->proto_cookie || c->proto_gen == gen)
		return;
	c->proto_gen = gen;
	/* a key on the stack: before 6.2 the verifier refuses a map value's
	 * field as a key when c is a map iterator's value (tcp_flush) */
	cookie = c->proto_cookie;
	v = bpf_map_lookup_elem(&proto_verdicts, &cookie);
	if (!v)
		return;
	c->proto = v->proto < PROTO_NR ? v->proto : PROTO_UNKNOWN;
	c->proto_state = PROTO_DECIDED;
	proto_uncount(c);
	bpf_map_delete_elem(&proto_verdicts, &cookie);
	if (c->role == TCP_ROLE_SERVER)
		edge_reattribute(c);
}

/* What a finished request counts under. */
static __always_inline __u32 proto_slot(const struct tcp_conn *c)
{
	if (c->proto_state == PROTO_DECIDED)
		return c->proto;
	if (c->proto_state == PROTO_OFF)
		return PROTO_UNKNOWN;
	return TCP_PROTO_UNDECIDED;
}

static __always_inline void proto_header(struct proto_sample *s,
					 const struct tcp_conn *c)
{
	s->cookie = c->proto_cookie;
	s->ts = bpf_ktime_get_ns();
	/* the owner's view, once it has read or written */
	if (c->pid)
		s->t = c->t;
	else
		__builtin_memset(&s->t, 0, sizeof(s->t));
	s->pid = c->pid;
	s->svc = c->svc;
	s->role = c->role;
	__builtin_memset(s->pad, 0, sizeof(s->pad));
}

/* The connection closes undecided: user space decides on what it has. */
static __always_inline void proto_closed(struct tcp_conn *c)
{
	struct proto_close *s;

	/* A verdict user space writes after this ages out of the LRU
	 * (cookies are never reused). */
	if ((c->proto_state != PROTO_CAPTURING &&
	     c->proto_state != PROTO_WAITING) ||
	    !c->proto_cookie)
		return;
	s = bpf_ringbuf_reserve(&tcp_events, sizeof(*s), 0);
	if (!s) {
		stat_inc(&tcp_stats, TCP_PROTO_LOST);
		return;
	}
	s->cookie = c->proto_cookie;
	s->t = c->t;
	s->pid = c->pid;
	s->svc = c->svc;
	s->role = c->role;
	s->src_known = c->src_known;
	s->src = c->src;
	s->requests = c->requests;
	__builtin_memset(s->pad, 0, sizeof(s->pad));
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* Where the TCP payload of skb starts (network header first), and its
 * sequence number; 0 when it is not TCP. Two loads: the IP header, then
 * the TCP header's sequence number and data offset. */
static __always_inline __u32 payload_offset(struct __sk_buff *skb, __u32 *seq)
{
	__u8 ip[10], tcp[9];
	__u32 off;

	if (bpf_skb_load_bytes(skb, 0, ip, sizeof(ip)))
		return 0;
	if (skb->protocol == bpf_htons(ETH_P_IP) && ip[9] == IPPROTO_TCP)
		off = (ip[0] & 0xf) * 4;
	/* extension headers: not before TCP on a socket's own segments in
	 * practice */
	else if (skb->protocol == bpf_htons(ETH_P_IPV6) && ip[6] == IPPROTO_TCP)
		off = 40;
	else
		return 0;
	if (bpf_skb_load_bytes(skb, off + 4, tcp, sizeof(tcp)))
		return 0;
	*seq = (__u32)tcp[0] << 24 | (__u32)tcp[1] << 16 |
	       (__u32)tcp[2] << 8 | tcp[3];
	return off + (tcp[8] >> 4) * 4;
}

/* Whether a message starting with these 6 bytes is a TLS ClientHello
 * (a handshake record of version 3.x holding handshake type 1). */
static __always_inline bool tls_hello(const __u8 *h)
{
	return h[0] == 0x16 && h[1] == 3 && h[5] == 1;
}

/* Whether what c carries in direction dir goes from the client to the
 * server: only that can be a ClientHello, and only that is worth the
 * read that tells (an accepted socket not yet read is a server's). */
static __always_inline bool client_to_server(const struct tcp_conn *c,
					     __u8 dir)
{
	return (c->role == TCP_ROLE_CLIENT) == (dir == PROTO_DIR_OUT);
}

/* A sample of PROTO_SAMPLE_BYTES, or of PROTO_HELLO_BYTES for a hello. */
static __always_inline struct proto_sample *reserve_sample(bool hello)
{
	struct proto_sample *s;

	if (hello)
		s = bpf_ringbuf_reserve(&tcp_events, sizeof(struct proto_hello),
					0);
	else
		s = bpf_ringbuf_reserve(&tcp_events, sizeof(*s), 0);
	if (!s)
		stat_inc(&tcp_stats, TCP_PROTO_LOST);
	return s;
}

/* The bytes to capture of len: 1 .. the sample's room, as the verifier
 * can see it (the compiler would fold a mask written in C: it knows the
 * bounds already). */
static __always_inline __u32 cap_of(__u32 len, bool hello)
{
	__u32 cap;

	if (hello) {
		cap = (len < PROTO_HELLO_BYTES ? len : PROTO_HELLO_BYTES) - 1;
		asm volatile("%[cap] &= 511" : [cap] "+r"(cap));
	} else {
		cap = (len < PROTO_SAMPLE_BYTES ? len : PROTO_SAMPLE_BYTES) - 1;
		asm volatile("%[cap] &= 63" : [cap] "+r"(cap));
	}
	return cap + 1;
}

static __always_inline void capture(struct __sk_buff *skb, __u8 dir)
{
	struct bpf_sock *sk = skb->sk;
	struct proto_sample *s;
	struct tcp_conn *c;
	__u32 off, len, cap, seq = 0;
	bool hello;
	__u8 seg, head[6];

	/* the one test a segment pays while no connection captures */
	if (!*(volatile __u64 *)&capturing || !sk)
		return;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return;
	c = bpf_sk_storage_get(&sock_conns, sk, 0, 0);
	/* the one test every segment of a decided connection pays */
	if (!c || c->proto_state != PROTO_CAPTURING)
		return;
	seg = c->proto_segs[dir & 1];
	if (seg >= PROTO_MAX_SEGS)
		return;
	off = payload_offset(skb, &seq);
	if (!off || skb->len <= off)
		return; /* no payload: a handshake, an ack */
	len = skb->len - off;
	if (!c->proto_cookie) {
		c->proto_cookie = bpf_get_socket_cookie(skb);
		c->proto_gen = proto_verdict_gen; /* nothing for it yet */
	}
	proto_resolve(c);
	if (c->proto_state != PROTO_CAPTURING)
		return;
	/* a retransmission, or a segment out of order: not the stream's
	 * next bytes */
	if (seg && seq != c->proto_next[dir & 1])
		return;
	c->proto_next[dir & 1] = seq + len;
	c->proto_segs[dir & 1] = seg + 1;
	if (c->proto_segs[0] >= PROTO_MAX_SEGS &&
	    c->proto_segs[1] >= PROTO_MAX_SEGS) {
		c->proto_state = PROTO_WAITING;
		proto_uncount(c);
	}
	hello = len > PROTO_SAMPLE_BYTES && client_to_server(c, dir) &&
		!bpf_skb_load_bytes(skb, off, head, sizeof(head)) &&
		tls_hello(head);
	s = reserve_sample(hello);
	if (!s)
		return;
	proto_header(s, c);
	s->len = len;
	s->dir = dir;
	s->seg = seg;
	cap = cap_of(len, hello);
	if (bpf_skb_load_bytes(skb, off, s->data, cap))
		cap = 0;
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* Attached by user space to the root of the cgroup v2 hierarchy. Both
 * let every packet through. */
SEC("cgroup_skb/ingress")
int proto_ingress(struct __sk_buff *skb)
{
	capture(skb, PROTO_DIR_IN);
	return 1;
}

/* Used only where tcp_sendmsg_locked is not a BTF tracepoint (where it
 * is, tcp.bpf.c's program on it calls capture_send). */
SEC("cgroup_skb/egress")
int proto_egress(struct __sk_buff *skb)
{
	capture(skb, PROTO_DIR_OUT);
	return 1;
}

/* Where a send's first iovecs are joined (a program runs on one CPU at a
 * time): twice a sample, so that a piece of up to a sample's size fits
 * at any offset below one, which is what the verifier checks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[2 * PROTO_SAMPLE_BYTES]);
} proto_scratch SEC(".maps");

/* iovecs looked at per send */
#define PROTO_IOVS 4

/* Joins the bytes of the first iovecs of a send into buf, up to a
 * sample: a writev of a header and a body (Erlang's sends, whose first
 * iovec is even empty) reads as the one message it is. Returns how many
 * bytes. */
static __always_inline __u32 gather_iovs(const struct iovec *iov, __u32 nr,
					 __u8 *buf)
{
	__u32 got = 0, n, off;
	const void *base;

	/* no bytes of an earlier send behind this one's */
	__builtin_memset(buf, 0, PROTO_SAMPLE_BYTES);
	for (int i = 0; i < PROTO_IOVS; i++) {
		if (i >= nr || got >= PROTO_SAMPLE_BYTES)
			break;
		base = BPF_CORE_READ(iov + i, iov_base);
		n = BPF_CORE_READ(iov + i, iov_len);
		if (!n)
			continue;
		if (n > PROTO_SAMPLE_BYTES - got)
			n = PROTO_SAMPLE_BYTES - got;
		n -= 1;
		off = got;
		asm volatile("%[n] &= 63" : [n] "+r"(n));
		asm volatile("%[off] &= 63" : [off] "+r"(off));
		if (bpf_probe_read_user(buf + off, n + 1, base))
			break;
		got += n + 1;
	}
	return got;
}

/* What the owner sends, from its own buffer: once per send call (the
 * tracepoint fires per segment-sized chunk; a chunk after the first
 * starts inside the buffer). A send from the kernel's pages (sendfile,
 * splice) counts with its length, its bytes not read. c: the socket's
 * state (tcp.bpf.c's tcp_sendmsg_locked program looks it up once for
 * this and for the client side). */
static __always_inline void capture_send(const struct sock *sk,
					 const struct msghdr *msg,
					 struct tcp_conn *c)
{
	const struct iov_iter *it = &msg->msg_iter;
	const struct iovec *iov = NULL;
	struct proto_sample *s;
	const void *base = NULL;
	__u32 zero = 0;
	__u8 *buf;
	__u32 len, cap, avail = 0;
	__u8 seg, type, head[6];
	bool hello;

	if (c->proto_state != PROTO_CAPTURING)
		return;
	seg = c->proto_segs[PROTO_DIR_OUT];
	if (seg >= PROTO_MAX_SEGS || BPF_CORE_READ(it, iov_offset))
		return;
	len = BPF_CORE_READ(it, count);
	if (!len)
		return;
	if (!c->proto_cookie) {
		c->proto_cookie = bpf_get_socket_cookie((struct sock *)sk);
		c->proto_gen = proto_verdict_gen; /* nothing for it yet */
	}
	proto_resolve(c);
	if (c->proto_state != PROTO_CAPTURING)
		return;
	c->proto_segs[PROTO_DIR_OUT] = seg + 1;
	if (c->proto_segs[PROTO_DIR_IN] >= PROTO_MAX_SEGS &&
	    seg + 1 >= PROTO_MAX_SEGS) {
		c->proto_state = PROTO_WAITING;
		proto_uncount(c);
	}
	type = BPF_CORE_READ(it, iter_type);
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF)) {
		base = BPF_CORE_READ(it, ubuf);
		avail = len;
	} else if (type == bpf_core_enum_value(enum iter_type, ITER_IOVEC)) {
		iov = BPF_CORE_READ(it, __iov);
		base = BPF_CORE_READ(iov, iov_base);
		avail = BPF_CORE_READ(iov, iov_len);
	}
	if (avail > len)
		avail = len;
	hello = base && avail > PROTO_SAMPLE_BYTES &&
		client_to_server(c, PROTO_DIR_OUT) &&
		!bpf_probe_read_user(head, sizeof(head), base) &&
		tls_hello(head);
	s = reserve_sample(hello);
	if (!s)
		return;
	proto_header(s, c);
	/* The owner sends before kmond learns it is the owner (a server's
	 * greeting): this is its process. */
	if (!s->pid) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32, svc;

		if (kmon_selected_tgid(tgid, &svc)) {
			s->pid = tgid;
			s->svc = svc;
			read_tuple(sk, &s->t);
		}
	}
	s->len = len;
	s->dir = PROTO_DIR_OUT;
	s->seg = seg;
	/* the first iovec holds less than a sample of a longer send */
	if (iov && !hello && avail < len && avail < PROTO_SAMPLE_BYTES &&
	    (buf = bpf_map_lookup_elem(&proto_scratch, &zero))) {
		cap = gather_iovs(iov, BPF_CORE_READ(it, nr_segs), buf);
		__builtin_memcpy(s->data, buf, PROTO_SAMPLE_BYTES);
		s->caplen = cap;
		bpf_ringbuf_submit(s, wakeup_flags());
		return;
	}
	cap = cap_of(avail, hello);
	if (!base || !avail || bpf_probe_read_user(s->data, cap, base))
		cap = 0;
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

#endif
