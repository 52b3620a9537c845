/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* TLS in plaintext, the kernel side (included by tcp.bpf.c; see
 * docs/design/tls.md).
 *
 * Uprobes on OpenSSL's SSL_read, SSL_write (and their _ex forms) and
 * SSL_do_handshake, attached per monitored process that maps the
 * library (user/collectors/tcp/tls_attach.c), note per thread that an
 * SSL call is in progress and where its plaintext is. The tcp hooks
 * that fire inside the call, on the same thread, know the socket and
 * its state, and so tie the plaintext to the connection:
 *
 * - its bytes moved inside SSL_do_handshake (or outside any SSL call
 *   once one was seen) are no request's: the handshake, alerts, the
 *   close_notify;
 * - at the first SSL_read or SSL_write the connection turns to its
 *   plaintext: identification starts again on the plaintext under a
 *   cookie of its own (PROTO_TLS_COOKIE), its ciphertext (which named
 *   it `tls` and kept its server name) is no longer captured;
 * - a write's head and sample are read from SSL_write's buffer at the
 *   send's entry; a read's come when SSL_read returns with the
 *   plaintext: the return's program, which cannot reach the connection's
 *   state, leaves the head under the cookie (tls_heads), and the request
 *   model takes it at the request's end (tls_take_heads);
 * - a call that moves no socket byte (its plaintext from the record
 *   OpenSSL holds) is tied to its SSL object's connection (tls_ssls).
 *
 * Request boundaries and latency stay the tcp hooks' (the reads and
 * writes of ciphertext inside SSL calls); req_bytes and resp_bytes are
 * the plaintext's (tls_uncount, tls_take_heads). Nothing is ever
 * written to the traced process, nor a return value changed. */
#ifndef KMON_TLS_BPF_H
#define KMON_TLS_BPF_H

#include "tls.h"
#include "proto.bpf.h"
#include "outcome.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_THREADS);
	__type(key, __u32); /* thread id */
	__type(value, struct tls_call);
} tls_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct tls_heads);
} tls_heads SEC(".maps");

/* What the SSL calls' returns left for c (NULL: nothing yet). */
static __always_inline struct tls_heads *tls_heads_of(const struct tcp_conn *c)
{
	__u64 cookie = c->proto_cookie;

	return bpf_map_lookup_elem(&tls_heads, &cookie);
}

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct tls_ssl_key);
	__type(value, struct tls_ssl);
} tls_ssls SEC(".maps");

/* Processes with the uprobes attached (user space): while none, the tcp
 * hooks look no SSL call up. */
volatile __u32 tls_procs;

/* A zeroed call, too large for the stack. Never written. */
struct tls_call tls_call_zero;

static __always_inline void tls_enter(const void *ssl, __u8 kind,
				      const void *buf, __u64 num,
				      const void *count_at)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tls_ssl_key key = { .ssl = (__u64)ssl, .tgid = id >> 32 };
	__u32 tid = (__u32)id;
	struct tls_call *call;
	struct tls_ssl *known;

	bpf_map_update_elem(&tls_calls, &tid, &tls_call_zero, BPF_ANY);
	call = bpf_map_lookup_elem(&tls_calls, &tid);
	if (!call)
		return;
	call->kind = kind;
	call->buf = (__u64)buf;
	call->num = num > 0x7fffffff ? 0x7fffffff : num;
	call->count_at = (__u64)count_at;
	call->ssl = (__u64)ssl;
	/* a read served from OpenSSL's buffer: its connection, as the last
	 * call on this SSL object moved it (a tcp hook that fires says it
	 * again) */
	if (kind != TLS_CALL_READ)
		return;
	known = bpf_map_lookup_elem(&tls_ssls, &key);
	if (known) {
		call->cookie = known->cookie;
		call->h2 = known->h2;
	}
}

/* The SSL object of call moves c's bytes. */
static __always_inline void tls_ssl_seen(const struct tcp_conn *c,
					 const struct tls_call *call)
{
	struct tls_ssl_key key = {
		.ssl = call->ssl,
		.tgid = bpf_get_current_pid_tgid() >> 32,
	};
	struct tls_ssl v = { .cookie = c->proto_cookie, .h2 = c->h2 };

	if (call->ssl)
		bpf_map_update_elem(&tls_ssls, &key, &v, BPF_ANY);
}

/* Set before load: the uprobes load (with every tcp hook on tp_btf). */
const volatile bool tls_on;

/* The SSL call this thread is in, when it moves sk's bytes (trusted: a
 * BTF pointer, as every hook is where TLS is read). */
static __always_inline struct tls_call *tls_call_now(const struct sock *sk,
						     bool trusted)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tls_call *call;

	if (!trusted || !tls_on || !KMON_READ_ONCE(tls_procs))
		return NULL;
	call = bpf_map_lookup_elem(&tls_calls, &tid);
	if (!call)
		return NULL;
	/* one socket per call: another one's bytes are not its (a call
	 * whose return the uprobe missed, then a plain send) */
	if (call->sk && call->sk != (__u64)sk)
		return NULL;
	call->sk = (__u64)sk;
	return call;
}

/* The connection's first SSL_read or SSL_write: from now on it is read
 * in plaintext, identified again under its plaintext cookie. An exchange
 * before the TLS began (PostgreSQL's SSLRequest and its 'S') ends with
 * the bytes that follow, under the name its own bytes gave it, its
 * ciphertext's (tls_pre): the handshake between is no request's. */
static __always_inline void tls_begin(struct tcp_conn *c, const struct sock *sk)
{
	c->tls_pre = c->phase == TCP_RESPONSE;
	c->tls = 1;
	c->tls_hs = 1;
	if (c->proto_state == PROTO_OFF)
		return;
	proto_uncount(c);
	c->proto_cookie = bpf_get_socket_cookie((void *)sk) | PROTO_TLS_COOKIE;
	c->proto_gen = proto_verdict_gen;
	c->proto_state = PROTO_CAPTURING;
	c->proto_segs[0] = 0;
	c->proto_segs[1] = 0;
	c->head_acked[0] = 0;
	c->head_acked[1] = 0;
	/* ciphertext, taken as its messages went by */
	c->next_req.len = 0;
	c->next_resp.len = 0;
	proto_count(c);
}

/* Whether the request model takes these bytes of c (call: the SSL call
 * in progress, NULL: none): those of SSL_read and SSL_write do; a
 * handshake's, and once SSL calls were seen anything outside them, do
 * not. */
static __always_inline bool tls_feeds(struct tcp_conn *c, const struct sock *sk,
				      struct tls_call *call, bool trusted)
{
	if (!trusted || (!call && !c->tls_hs))
		return true;
	if (!call || call->kind == TLS_CALL_HANDSHAKE) {
		c->tls_hs = 1;
		c->call_ns = 0; /* its stamp is no call's nor response's */
		return false;
	}
	if (!c->tls)
		tls_begin(c, sk);
	return true;
}

/* Whether c's reads began with the client's preface (a server's
 * HTTP/2 connection, before it is identified). */
static __always_inline __u8 tls_h2_seen(const struct tcp_conn *c)
{
	struct tls_heads *h = tls_heads_of(c);

	return h && h->h2;
}

/* A server's connection whose reads began with the client's preface
 * is HTTP/2's from then on. nginx may write its SETTINGS before it reads
 * the preface: its reads, not only its writes, take the news. */
static __always_inline void tls_h2_adopt(struct tcp_conn *c)
{
	if (c->role == TCP_ROLE_SERVER && !c->requests && !h2_known(c))
		c->h2 = tls_h2_seen(c);
}

/* A read of len bytes inside a message of c that held only HTTP/2
 * control frames so far (the return of the read before said so): the
 * message begins with this read, its head comes from it. The request
 * (or the response) is moved to this read: its start, and its first
 * byte's sequence number, which the other end's record has. */
static __always_inline void tls_h2_resume(struct tcp_conn *c,
					  struct tls_call *call, int len,
					  const struct sock *sk)
{
	struct tls_heads *h = tls_heads_of(c);
	bool server = c->role != TCP_ROLE_CLIENT;

	if (!h || !h->open || h->open_is_req != server)
		return;
	if (server && c->phase == TCP_REQUEST && h->open_seq == c->req_seq) {
		c->start_ns = bpf_ktime_get_ns();
		c->tid = (__u32)bpf_get_current_pid_tgid();
		c->req_off = c->rx_off - len;
		c->req_seq = received_seq(sk, len, true);
		call->head_seq = c->req_seq;
	} else if (!server && c->phase == TCP_RESPONSE &&
		   h->open_seq == c->resp_seq) {
		c->resp_off = c->rx_off - len;
		c->resp_seq = received_seq(sk, len, true);
		call->head_seq = c->resp_seq;
	} else {
		return;
	}
	h->open = 0;
	call->head = 1;
	call->head_is_req = server;
}

/* A server's write that is not control frames only begins: a response
 * goes on until its return says otherwise (one that fails, its bytes
 * on the socket, leaves it going on). */
static __always_inline void tls_frames_more(const struct tcp_conn *c)
{
	struct tls_heads *h = tls_heads_of(c);

	if (h)
		h->out_ended = 0;
}

/* A send inside SSL_write begins (its first chunk): the head and the
 * sample from the plaintext. */
static __always_inline void tls_send_entry(const struct sock *sk,
					   const struct msghdr *msg,
					   struct tcp_conn *c,
					   struct tls_call *call)
{
	const void *base = (const void *)call->buf;
	struct proto_sample *s;
	__u32 cap, len = call->num, skip;
	__u8 seg;

	if (call->kind != TLS_CALL_WRITE || call->sent ||
	    msg->msg_iter.iov_offset)
		return;
	call->sent = 1;
	if (!c->tls)
		tls_begin(c, sk);
	call->cookie = c->proto_cookie;
	tls_ssl_seen(c, call);
	tls_h2_adopt(c);
	call->frames = c->role == TCP_ROLE_SERVER && h2_possible(c);
	/* HTTP/2's control frames: no message, and not in the head */
	skip = h2_send_begins(c, base, len);
	call->ctl = c->ctl_send;
	if (call->frames && !c->ctl_send)
		tls_frames_more(c);
	if (!c->ctl_send && skip < len)
		head_from_send(sk, c, base + skip, len - skip);
	if (c->proto_state != PROTO_CAPTURING || !len)
		return;
	seg = c->proto_segs[PROTO_DIR_OUT];
	if (seg >= PROTO_MAX_SEGS ||
	    !take_segment(c, (void *)sk, PROTO_DIR_OUT, seg))
		return;
	s = reserve_sample(false);
	if (!s)
		return;
	proto_header(s, c);
	s->len = len;
	s->dir = PROTO_DIR_OUT;
	s->seg = seg;
	cap = cap_of(len, false);
	if (bpf_probe_read_user(s->data, cap, base))
		cap = 0;
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* A read inside SSL_read moved len of c's bytes: what the return must
 * do with the plaintext, noted at the call's first read. A message began
 * with these bytes when they are all it has. */
static __always_inline void tls_read_seen(struct tcp_conn *c,
					  struct tls_call *call, int len,
					  const struct sock *sk)
{
	bool server = c->role != TCP_ROLE_CLIENT;
	__u8 seg;

	if (!call || call->kind != TLS_CALL_READ || call->seen)
		return;
	call->seen = 1;
	tls_h2_adopt(c);
	if (call->cookie != c->proto_cookie || call->h2 != h2_known(c))
		tls_ssl_seen(c, call);
	call->cookie = c->proto_cookie;
	if (call->held) {
		call->head = 1;
		call->head_is_req = 1;
		call->head_seq = c->held_seq;
	} else if (server && c->phase == TCP_REQUEST &&
		   c->req_off + len == c->rx_off) {
		call->begins = 1;
		call->head = 1;
		call->head_is_req = 1;
		call->head_seq = c->req_seq;
	} else if (!server && c->phase == TCP_RESPONSE &&
		   c->resp_off + len == c->rx_off) {
		call->begins = 1;
		call->head = 1;
		call->head_seq = c->resp_seq;
	}
	/* 2: the first request of a connection not identified yet: its
	 * return looks for the client's preface */
	call->h2 = 0;
	if (h2_known(c))
		call->h2 = 1;
	else if (!c->requests && c->proto_state != PROTO_DECIDED)
		call->h2 = 2;
	if (call->h2 == 1 && !call->head)
		tls_h2_resume(c, call, len, sk);
	if (!outcome_wanted(c)) {
		/* a held read's return still says what it held, and a
		 * first read's whether the client's preface began it */
		call->head = call->held || (call->head && call->h2 == 2);
		call->no_head = 1;
	}
	if (c->proto_state != PROTO_CAPTURING)
		return;
	seg = c->proto_segs[PROTO_DIR_IN];
	if (seg >= PROTO_MAX_SEGS ||
	    !take_segment(c, (void *)sk, PROTO_DIR_IN, seg))
		return;
	call->sample = 1;
	proto_header(&call->s, c);
	call->s.dir = PROTO_DIR_IN;
	call->s.seg = seg;
}

/* The request model counted len bytes of ciphertext (dir: as the socket
 * sees them) on a connection read in plaintext: taken back, the
 * plaintext counts instead (tls_take_heads). */
static __always_inline void tls_uncount(struct tcp_conn *c, __u8 dir, int len)
{
	bool request = (c->role == TCP_ROLE_CLIENT) == (dir == PROTO_DIR_OUT);

	if (request && c->phase == TCP_REQUEST)
		c->req_bytes -= len;
	else if (!request && c->phase == TCP_RESPONSE)
		c->resp_bytes -= len;
}

/* The head of the message a read began, from its buffer (n bytes at
 * base), past HTTP/2's control frames: a read of control frames only
 * leaves the head to the next read (tls_h2_resume), and says so. The
 * client's preface says an undecided connection is HTTP/2's. */
/* A head of size bytes at most from n bytes of user memory at src, its
 * first byte seq; none where nothing is left or the read fails. */
static __always_inline void head_from_user(__u8 *data, __u16 *len, __u32 *seq,
					   __u32 size, const void *src, __u32 n,
					   __u32 first)
{
	__u32 cap = n ? head_cap(n, size) : 0;

	if (cap && bpf_probe_read_user(data, cap, src))
		cap = 0;
	*seq = first;
	*len = cap;
}

static __always_inline bool tls_read_head(struct tls_heads *h,
					  const struct tls_call *call,
					  const void *base, __u32 n)
{
	__u8 b[4];
	__u32 skip = 0, left;

	if (call->h2 == 2 && call->head_is_req && n >= H2_PREFACE_LEN &&
	    !bpf_probe_read_user(b, sizeof(b), base) && h2_is_preface(b))
		h->h2 = 1;
	if (call->h2 == 1 || h->h2)
		skip = h2_control_user(base, n);
	h->open = skip >= n;
	h->open_is_req = call->head_is_req;
	h->open_seq = call->head_seq;
	h->no_head = call->no_head;
	if (call->no_head)
		return h->open;
	left = skip < n ? n - skip : 0;
	if (call->head_is_req)
		head_from_user(h->req.data, &h->req.len, &h->req.seq,
			       TCP_REQ_HEAD, base + skip, left, call->head_seq);
	else
		head_from_user(h->resp.data, &h->resp.len, &h->resp.seq,
			       TCP_RESP_HEAD, base + skip, left,
			       call->head_seq);
	return h->open;
}

/* A read served from OpenSSL's buffer, after a read of HTTP/2 control
 * frames only (the same socket read brought both): the head of the
 * message that read began is this one's. The message keeps that read's
 * start and first byte (no socket hook tells this read's). */
static __always_inline bool tls_buffered_head(struct tls_heads *h,
					      struct tls_call *call,
					      const void *base, __u32 n)
{
	call->head = 1;
	call->head_is_req = h->open_is_req;
	call->head_seq = h->open_seq;
	call->h2 = 1;
	call->no_head = h->no_head;
	return tls_read_head(h, call, base, n);
}

/* A read that goes on with the message whose head is data[0, *len):
 * up to 64 more bytes of it, while the head is under 64 (bounds the
 * verifier can see inside the head). */
static __always_inline void head_append(__u8 *data, __u16 *len, __u32 size,
					const void *base, __u32 n)
{
	__u32 off = *len, take;

	if (off >= 64 || off >= size)
		return;
	take = size - off;
	if (n < take)
		take = n;
	if (take > 64)
		take = 64;
	off &= 63;
	take = ((take - 1) & 63) + 1;
	if (!bpf_probe_read_user(data + off, take, base))
		*len = off + take;
}

/* Frames walked in one write at most: a response's HEADERS and DATA,
 * and control frames with them; past them the walk loses its place. */
#define TLS_FRAMES_WALKED 6

/* Whether a server's write that starts with the frame header f starts
 * where frames begin: its first SETTINGS, or a response's HEADERS (all
 * of them: END_HEADERS) on a client's stream (odd). A DATA payload's
 * bytes pass it about once in a million writes. */
static __always_inline bool tls_frames_start(const __u8 *f)
{
	if (f[3] == 4) /* SETTINGS, not its ACK */
		return !f[4] && h2_control_frame(f);
	return f[3] == 1 && (f[4] & 4) && !(f[5] & 0x80) && (f[8] & 1) &&
	       h2_frame_len(f) <= H2_MAX_FRAME;
}

/* A server's SSL_write wrote n bytes at base of an HTTP/2 connection
 * (h: its heads): the frames they hold, from where the last write left
 * off, to learn whether a response was written whole (its last DATA or
 * HEADERS frame ended its stream, tls_hold_read). The walk starts at a
 * write that starts where frames begin (tls_frames_start); it loses its
 * place, until such a write, at a header split across two writes, a
 * header no frame has, or more frames in one write than it walks. */
static __always_inline void tls_frames_written(struct tls_heads *h,
					       const void *base, __u32 n)
{
	__u8 f[H2_FRAME_HEADER];
	__u32 at, len;

	if (!h->out_known) {
		if (n < H2_FRAME_HEADER ||
		    bpf_probe_read_user(f, sizeof(f), base) ||
		    !tls_frames_start(f))
			return;
		h->out_known = 1;
		h->out_left = 0;
		h->out_ended = 0;
	}
	if (h->out_left >= n) {
		h->out_left -= n;
		return;
	}
	at = h->out_left;
	for (int i = 0; i < TLS_FRAMES_WALKED; i++) {
		if (at + H2_FRAME_HEADER > n ||
		    bpf_probe_read_user(f, sizeof(f), base + at) || f[3] > 9)
			break;
		len = h2_frame_len(f);
		if (f[3] <= 1) /* DATA, HEADERS */
			h->out_ended = f[4] & 1;
		at += H2_FRAME_HEADER + len;
		if (at >= n) {
			h->out_left = at - n;
			return;
		}
	}
	h->out_known = 0;
}

/* Whether c's last response was written whole, by its frames (1), or
 * not (0); -1 where they are not known. */
static __always_inline int tls_response_written(const struct tcp_conn *c)
{
	struct tls_heads *h = tls_heads_of(c);

	if (!h || !h->out_known)
		return -1;
	return h->out_ended && !h->out_left;
}

/* A read returned n bytes of plaintext into the call's buffer, or a
 * write wrote n: their count, and a read's head and sample. */
static __always_inline void tls_done(struct tls_call *call, __u32 n)
{
	const void *base = (const void *)call->buf;
	struct tls_heads *h, zero = {};
	struct proto_sample *s;
	__u64 cookie = call->cookie;
	bool read = call->kind == TLS_CALL_READ, ctl = false;
	__u32 cap;

	if (!n || !cookie)
		return;
	h = lookup_or_try_init(&tls_heads, &cookie, &zero);
	if (!h)
		return;
	if (read && call->head && !call->cont)
		ctl = tls_read_head(h, call, base, n);
	else if (read && !call->seen && h->open)
		ctl = tls_buffered_head(h, call, base, n);
	else if (read && call->head && call->head_is_req)
		head_append(h->req.data, &h->req.len, TCP_REQ_HEAD, base, n);
	else if (read && call->head)
		head_append(h->resp.data, &h->resp.len, TCP_RESP_HEAD, base, n);
	else if (read && call->h2 == 1)
		ctl = h2_control_user(base, n) >= n;
	/* HTTP/2's control frames are no request's or response's (a
	 * write's were found at its entry) */
	if (!ctl && !call->ctl)
		__sync_fetch_and_add(
			&h->bytes[read ? PROTO_DIR_IN : PROTO_DIR_OUT], n);
	if (!read && call->frames)
		tls_frames_written(h, base, n);
	if (!read || !call->sample)
		return;
	s = reserve_sample(false);
	if (!s)
		return;
	__builtin_memcpy(s, &call->s,
			 __builtin_offsetof(struct proto_sample, data));
	if (call->cont)
		s->ts = bpf_ktime_get_ns();
	s->len = n;
	cap = cap_of(n, false);
	if (bpf_probe_read_user(s->data, cap, base))
		cap = 0;
	s->caplen = cap;
	bpf_ringbuf_submit(s, wakeup_flags());
}

/* A read returns (tls_ssl): one that moved socket bytes and began a
 * message, or took a sample, notes it for the reads after it on its SSL
 * object; one that moved none goes on with that message: its head grows
 * and a sample or two more go to identification (a packet's header alone
 * names no protocol). Not on HTTP/2's, whose reads of OpenSSL's buffer
 * tls_buffered_head takes. */
static __always_inline void tls_ssl_cont(struct tls_call *call)
{
	struct tls_ssl_key key = {
		.ssl = call->ssl,
		.tgid = bpf_get_current_pid_tgid() >> 32,
	};
	struct tls_ssl *v;

	if (call->kind != TLS_CALL_READ || !call->ssl || call->h2 == 1)
		return;
	v = bpf_map_lookup_elem(&tls_ssls, &key);
	if (!v || v->cookie != call->cookie)
		return;
	if (call->seen) {
		if (!call->begins && !call->sample)
			return;
		v->cont = 1;
		v->cont_req = call->head_is_req;
		v->cont_head = call->head;
		v->samples_left = call->sample ? 2 : 0;
		__builtin_memcpy(v->sample_hdr, &call->s,
				 sizeof(v->sample_hdr));
		return;
	}
	if (!v->cont)
		return;
	call->cont = 1;
	call->head = v->cont_head;
	call->head_is_req = v->cont_req;
	if (call->sample || !v->samples_left)
		return;
	v->samples_left--;
	call->sample = 1;
	__builtin_memcpy(&call->s, v->sample_hdr, sizeof(v->sample_hdr));
}

/* A held read whose SSL_read returned no plaintext: the client's
 * close_notify, or a record not whole yet. No request began with it
 * (tls_settle reads it as control frames): a record's rest comes with a
 * later read, which is held or turns as any, and its return takes the
 * record's head; a request the record held starts at that read. */
static __always_inline void tls_held_empty(const struct tls_call *call)
{
	struct tls_heads *h, zero = {};
	__u64 cookie = call->cookie;

	if (!call->held || !cookie)
		return;
	h = lookup_or_try_init(&tls_heads, &cookie, &zero);
	if (!h)
		return;
	h->open = 1;
	h->open_is_req = 1;
	h->open_seq = call->head_seq;
}

/* An SSL call returns: SSL_read's and SSL_write's ret is the count, the
 * _ex forms' 1 says it is behind their pointer. */
static __always_inline void tls_exit(int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tls_call *call = bpf_map_lookup_elem(&tls_calls, &tid);
	__u64 n = 0;

	if (!call)
		return;
	if (call->kind != TLS_CALL_HANDSHAKE && call->count_at && ret == 1)
		bpf_probe_read_user(&n, sizeof(n), (void *)call->count_at);
	else if (call->kind != TLS_CALL_HANDSHAKE && !call->count_at && ret > 0)
		n = ret;
	if (n > call->num)
		n = call->num;
	if (n)
		tls_ssl_cont(call);
	if (n)
		tls_done(call, n);
	else
		tls_held_empty(call);
	bpf_map_delete_elem(&tls_calls, &tid);
}

/* At the request's end: the plaintext bytes moved since the last take
 * (its own: the next request's come back after this end), and the heads
 * the reads of its messages left, when they are its messages (the same
 * first byte). */
static __always_inline void tls_take_heads(struct tcp_conn *c)
{
	struct tls_heads *h;
	__u64 in, out;

	if (!c->tls)
		return;
	h = tls_heads_of(c);
	if (!h)
		return;
	/* a held read's plaintext is the request it may begin
	 * (tls_settle), not the one a flush finishes meanwhile */
	in = c->tls_held ? 0 :
			   __sync_lock_test_and_set(&h->bytes[PROTO_DIR_IN], 0);
	out = __sync_lock_test_and_set(&h->bytes[PROTO_DIR_OUT], 0);
	if (c->role == TCP_ROLE_CLIENT) {
		c->req_bytes += out;
		c->resp_bytes += in;
	} else {
		c->req_bytes += in;
		c->resp_bytes += out;
	}
	if (!c->req_head.len && h->req.len && h->req.seq == c->req_seq)
		c->req_head = h->req;
	if (!c->resp_head.len && h->resp.len && h->resp.seq == c->resp_seq)
		c->resp_head = h->resp;
}

/* Where the frames a server wrote are not known (tls_frames_written:
 * a connection older than kmond, a walk that lost its place), a read is
 * held once its response has sent this many bytes (ciphertext), as a
 * client sends WINDOW_UPDATEs once it has taken a part of its window (4
 * KiB of data: Go's): a request after a smaller response begins at its
 * read. A held request is linked to its thread's calls only when it is
 * settled, at its connection's next hook (the calls its handler made
 * first, to an upstream, find no parent), and counted in the load then. */
#define TLS_HOLD_AFTER 4096

/* Whether this read of sk is inside the SSL_read whose read c holds. */
static __always_inline bool tls_in_held_call(const struct tcp_conn *c,
					     const struct sock *sk)
{
	struct tls_call *call = tls_call_now(sk, true);

	return c->tls_held && call && call->held;
}

/* A server's read inside SSL_read while its HTTP/2 response is being
 * sent: a client's WINDOW_UPDATEs (a response larger than the client's
 * window), a PING, or a new request. Only the plaintext tells, when
 * SSL_read returns: the read is held (c->tls_held), the response goes
 * on, and the connection's next hook settles it (tls_settle, tcp.bpf.c)
 * by what the return left; its head is read at the return as a
 * request's. The same call's next socket read (OpenSSL reads a record's
 * header, then its body) joins it; another read comes here once the one
 * held is settled (recv_bytes). Returns whether the read is held. */
static __always_inline bool tls_hold_read(struct tcp_conn *c,
					  const struct sock *sk, int len)
{
	struct tls_call *call = tls_call_now(sk, true);
	int written;

	/* still held here: this read is the held call's (recv_bytes) */
	if (c->tls_held) {
		c->rx_off += len;
		return true;
	}
	/* the first request's response: its reads' returns may have found
	 * the client's preface since */
	tls_h2_adopt(c);
	if (!call || call->kind != TLS_CALL_READ || call->seen ||
	    c->role != TCP_ROLE_SERVER || c->phase != TCP_RESPONSE ||
	    !h2_known(c))
		return false;
	/* a response written whole: the read begins what comes next, at
	 * once (where the frames are not known, one past TLS_HOLD_AFTER is
	 * held) */
	written = tls_response_written(c);
	if (written == 1 ||
	    (written < 0 && c->tx_off - c->resp_off < TLS_HOLD_AFTER))
		return false;
	/* what the request in progress read so far is its own: the
	 * return's plaintext, and its head, will be the held read's */
	tls_take_heads(c);
	c->tls_held = 1;
	call->held = 1;
	c->held_ns = bpf_ktime_get_ns();
	c->held_off = c->rx_off;
	c->held_seq = received_seq(sk, len, true);
	c->rx_off += len;
	tls_read_seen(c, call, len, sk);
	return true;
}

/* c closes: its heads go. */
static __always_inline void tls_forget(const struct tcp_conn *c)
{
	__u64 cookie = c->proto_cookie;

	bpf_map_delete_elem(&tls_heads, &cookie);
}

#endif
