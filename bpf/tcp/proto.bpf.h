/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Protocol identification, the kernel side (included by tcp.bpf.c: it
 * works on the tcp collector's connection state; see proto.h).
 *
 * What a socket receives is captured at the ingress of the cgroups of
 * the monitored processes (user/collectors/proto_cgroups.h): it sees
 * every segment with its payload readable by bpf_skb_load_bytes
 * wherever it lies (a received TCP segment's payload is in page
 * fragments, which the BTF tracepoint tcp_probe would make us chase by
 * hand, without the kernel's page_offset_base). What it sends is read
 * from the sender's own buffer at tcp_sendmsg_locked, once per send call
 * (the cgroup's egress, which sees every segment and ack, stands in where
 * that tracepoint is missing). While no connection is undecided, a
 * segment costs one load (the count of those capturing); else one
 * without payload (most: the handshake, acks, the close) a few loads of
 * its headers, one with payload a socket-storage lookup; only connections
 * still undecided go further, and at most PROTO_MAX_SEGS messages each way
 * reach the ring, each read once, straight into its sample. */
#ifndef KMON_PROTO_BPF_H
#define KMON_PROTO_BPF_H

#include "proto.h"
#include "tcp_state.bpf.h"
#include "send_buffer.bpf.h"
#include "outcome.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

/* Set before load: capture is on (every tcp hook on tp_btf). */
const volatile bool proto_capture;

/* The state of a segment's socket: in the socket, or in the hash under
 * the socket's address (the same address the tcp hooks key it by). */
static __always_inline struct tcp_conn *conn_of_skb_sock(struct bpf_sock *sk)
{
	__u64 skp = (__u64)sk;

	if (conn_in_socket)
		return bpf_sk_storage_get(&sock_conns, sk, 0, 0);
	return bpf_map_lookup_elem(&conns, &skp);
}

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
	s->src_external = c->src_external;
	s->src = c->src;
	s->requests = c->requests;
	s->pad = 0;
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* Where the TCP payload of skb starts (from the network header), its
 * sequence number and acknowledgement; 0 when it has none (a handshake, an ack) or it is not
 * TCP. Plain loads, no helper: the stack pulled the headers into the
 * linear part before either hook, and most segments (acks) end here,
 * before their socket is looked at. */
static __always_inline __u32 payload_offset(struct __sk_buff *skb, __u32 *seq,
					    __u32 *ack)
{
	__u8 *data = (__u8 *)(long)skb->data;
	__u8 *end = (__u8 *)(long)skb->data_end;
	__u8 *th;
	__u32 ipl, off;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		if (data + 20 > end || data[9] != IPPROTO_TCP)
			return 0;
		ipl = (data[0] & 0xf) * 4;
		/* extension headers: not before TCP on a socket's own segments in
	 * practice */
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		if (data + 40 > end || data[6] != IPPROTO_TCP)
			return 0;
		ipl = 40;
	} else {
		return 0;
	}
	th = data + ipl;
	if (th + 20 > end)
		return 0;
	off = ipl + (th[12] >> 4) * 4;
	if (skb->len <= off)
		return 0;
	*seq = (__u32)th[4] << 24 | (__u32)th[5] << 16 | (__u32)th[6] << 8 |
	       th[7];
	*ack = (__u32)th[8] << 24 | (__u32)th[9] << 16 | (__u32)th[10] << 8 |
	       th[11];
	return off;
}

/* Whether a message starting with these 6 bytes is a TLS ClientHello
 * (a handshake record of version 3.x holding handshake type 1). */
static __always_inline bool tls_hello(const __u8 *h)
{
	return h[0] == 0x16 && h[1] == 3 && h[5] == 1;
}

/* Whether what c carries in direction dir goes from the client to the
 * server: only that can be a ClientHello, and only that is worth the
 * longer sample (an accepted socket not yet read is a server's). */
static __always_inline bool client_to_server(const struct tcp_conn *c, __u8 dir)
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

/* Whether the first cap bytes of a len-byte message, read into s, are a
 * TLS ClientHello that runs on past them: it needs the longer sample. */
static __always_inline bool hello_runs_on(const struct proto_sample *s,
					  const struct tcp_conn *c, __u8 dir,
					  __u32 cap, __u32 len)
{
	return cap == PROTO_SAMPLE_BYTES && len > cap &&
	       client_to_server(c, dir) && tls_hello(s->data);
}

/* The longer sample for such a message: s's header moves into it and s
 * goes. NULL (s gone too) when the ring is full. */
static __always_inline struct proto_sample *hello_sample(struct proto_sample *s)
{
	struct proto_sample *h = reserve_sample(true);

	if (h)
		__builtin_memcpy(h, s,
				 __builtin_offsetof(struct proto_sample, data));
	bpf_ringbuf_discard(s, BPF_RB_NO_WAKEUP);
	return h;
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

/* Counts message seg of direction dir as captured, taking the verdict
 * user space may have left first; false when the connection wants no
 * more (decided). ctx names the socket for its cookie. */
static __always_inline bool take_segment(struct tcp_conn *c, void *ctx,
					 __u8 dir, __u8 seg)
{
	if (!c->proto_cookie) {
		c->proto_cookie = bpf_get_socket_cookie(ctx);
		c->proto_gen = proto_verdict_gen; /* nothing for it yet */
	}
	proto_resolve(c);
	if (c->proto_state != PROTO_CAPTURING)
		return false;
	c->proto_segs[dir & 1] = seg + 1;
	if (c->proto_segs[0] >= PROTO_MAX_SEGS &&
	    c->proto_segs[1] >= PROTO_MAX_SEGS) {
		c->proto_state = PROTO_WAITING;
		proto_uncount(c);
	}
	return true;
}

/* The sequence number of the first byte of a stream (its ISN + 1), from
 * where the stack stands now: next (rcv_nxt, or snd_una) moved past the
 * handshake by exactly the bytes it counted (bytes_received, or
 * bytes_acked), except that an active opener's bytes_acked counts its own
 * SYN too (own_syn).
 * Why: the capture programs run only in the cgroups of monitored
 * processes, attached when one appears there, so a connection can be
 * older than its cgroup's program; its first message seen would then be
 * a later one, which must not be taken for the start of the talk. */
static __always_inline __u32 stream_first(__u32 next, __u64 counted,
					  bool own_syn)
{
	return next - (__u32)counted + own_syn;
}

/* The connection's first bytes went by before kmond could see them: it
 * is not captured (it stays unknown, or takes its server's usual
 * protocol), and it no longer holds the capture gate open. */
static __always_inline void missed_start(struct tcp_conn *c)
{
	c->proto_state = PROTO_WAITING;
	proto_uncount(c);
}

/* Whether a segment at seq, the first one seen in direction dir, starts
 * its stream (in: the stack has not taken it yet). */
static __always_inline bool segment_starts(struct bpf_sock *sk,
					   const struct tcp_conn *c, __u8 dir,
					   __u32 seq)
{
	struct bpf_tcp_sock *tp = bpf_tcp_sock(sk);

	if (!tp)
		return false;
	if (dir == PROTO_DIR_IN)
		return seq ==
		       stream_first(tp->rcv_nxt, tp->bytes_received, false);
	return seq == stream_first(tp->snd_una, tp->bytes_acked,
				   c->role == TCP_ROLE_CLIENT);
}

static __always_inline void capture(struct __sk_buff *skb, __u8 dir)
{
	struct bpf_sock *sk;
	struct proto_sample *s;
	struct tcp_conn *c;
	__u32 off, len, cap, seq = 0, ack = 0;
	bool heads = KMON_READ_ONCE(outcomes_on);
	__u32 skip;
	__u8 seg;

	/* the one test a segment pays while no connection captures and
	 * outcomes are off (and no plain HTTP/2 connection is open) */
	if (!KMON_READ_ONCE(capturing) && !heads && !KMON_READ_ONCE(h2_plain))
		return;
	off = payload_offset(skb, &seq, &ack);
	if (!off)
		return;
	sk = skb->sk;
	if (!sk)
		return;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return;
	c = conn_of_skb_sock(sk);
	/* a TLS connection read in plaintext: its ciphertext says nothing */
	if (!c || c->tls)
		return;
	if (heads)
		head_from_skb(skb, c, dir, off, seq, ack);
	else if (h2_possible(c)) /* outcomes off: HTTP/2's control frames */
		h2_segment(skb, c, dir, off, skb->len - off, seq, &skip);
	/* the one test every segment with bytes of a decided connection
	 * pays */
	if (c->proto_state != PROTO_CAPTURING)
		return;
	seg = c->proto_segs[dir & 1];
	if (seg >= PROTO_MAX_SEGS)
		return;
	/* a retransmission, or a segment out of order: not the stream's
	 * next bytes */
	if (seg && seq != c->proto_next[dir & 1])
		return;
	if (!seg && !segment_starts(sk, c, dir, seq)) {
		missed_start(c);
		return;
	}
	len = skb->len - off;
	if (!take_segment(c, skb, dir, seg))
		return;
	c->proto_next[dir & 1] = seq + len;
	s = reserve_sample(false);
	if (!s)
		return;
	proto_header(s, c);
	s->len = len;
	s->dir = dir;
	s->seg = seg;
	cap = cap_of(len, false);
	if (bpf_skb_load_bytes(skb, off, s->data, cap))
		cap = 0;
	if (hello_runs_on(s, c, dir, cap, len)) {
		if (!(s = hello_sample(s)))
			return;
		cap = cap_of(len, true);
		if (bpf_skb_load_bytes(skb, off, s->data, cap))
			cap = 0;
	}
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* Attached by user space to the cgroups (v2) of the monitored processes.
 * Both let every packet through. */
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

/* Whether the send sk is about to queue (its first chunk: write_seq is
 * where it starts) starts the stream. */
static __always_inline bool send_starts(const struct sock *sk,
					const struct tcp_conn *c)
{
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);

	return tp && tp->write_seq == stream_first(tp->snd_una, tp->bytes_acked,
						   c->role == TCP_ROLE_CLIENT);
}

/* What the owner sends, from its own buffer: once per send call (the
 * tracepoint fires per segment-sized chunk; a chunk after the first
 * starts inside the buffer). A send from the kernel's pages (sendfile,
 * splice) counts with its length, its bytes not read. The arguments are
 * BTF pointers: their fields are plain loads, not helper calls. c: the
 * socket's state (tcp.bpf.c's tcp_sendmsg_locked program looks it up
 * once for this and for stamping the send). */
static __always_inline void capture_send(const struct sock *sk,
					 const struct msghdr *msg,
					 struct tcp_conn *c)
{
	const struct iov_iter *it = &msg->msg_iter;
	const struct iovec *iov;
	struct proto_sample *s;
	const void *base;
	__u32 zero = 0;
	__u8 *buf;
	__u32 len, cap, avail;
	__u8 seg;

	if (c->proto_state != PROTO_CAPTURING)
		return;
	seg = c->proto_segs[PROTO_DIR_OUT];
	if (seg >= PROTO_MAX_SEGS || it->iov_offset)
		return;
	if (!seg && !send_starts(sk, c)) {
		missed_start(c);
		return;
	}
	len = it->count;
	if (!len || !take_segment(c, (void *)sk, PROTO_DIR_OUT, seg))
		return;
	base = send_base(it, len, &avail, &iov);
	s = reserve_sample(false);
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
			read_tuple(sk, &s->t, true);
		}
	}
	s->len = len;
	s->dir = PROTO_DIR_OUT;
	s->seg = seg;
	/* the first iovec holds less than a sample of a longer send */
	if (iov && avail < len && avail < PROTO_SAMPLE_BYTES &&
	    (buf = bpf_map_lookup_elem(&proto_scratch, &zero))) {
		cap = gather_iovs(iov, it->nr_segs, buf);
		__builtin_memcpy(s->data, buf, PROTO_SAMPLE_BYTES);
		s->caplen = cap;
		bpf_ringbuf_submit(s, wakeup_flags());
		return;
	}
	cap = cap_of(avail, false);
	if (!base || !avail || bpf_probe_read_user(s->data, cap, base))
		cap = 0;
	if (hello_runs_on(s, c, PROTO_DIR_OUT, cap, avail)) {
		if (!(s = hello_sample(s)))
			return;
		cap = cap_of(avail, true);
		if (bpf_probe_read_user(s->data, cap, base))
			cap = 0;
	}
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

#endif
