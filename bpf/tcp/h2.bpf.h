/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* HTTP/2's connection control, the kernel side (included by
 * outcome.bpf.h; docs/design/outcomes.md, "HTTP/2").
 *
 * The request model counts a request per turn of direction
 * (docs/design/tcp-requests.md). On an HTTP/2 connection the ends also
 * send frames that are no request and no answer: the client's preface,
 * SETTINGS and their ACK, WINDOW_UPDATE, PING, PRIORITY, RST_STREAM,
 * GOAWAY. A message made only of those would be a turn of its own, an
 * exchange with no request in it, and its frames would push the
 * response's HEADERS out of the head kmond keeps. So:
 *
 * - a send made only of control frames is no request's and no
 *   response's (ctl_send, read from the sender's buffer at the send's
 *   entry);
 * - a segment received made only of them is noted (ctl_run, at the
 *   cgroup ingress program), and so is a run of such segments one after
 *   the other; a read that lies within the run is no request's or
 *   response's either; likewise a segment sent, at the egress program,
 *   where no send's entry is hooked (before 6.13, no
 *   tcp_sendmsg_locked), and a send within such a run;
 * - a head starts at the first frame that is not control; on plain TCP
 *   only where that frame is HEADERS (or DATA ending before a HEADERS):
 *   a segment of DATA alone goes on a message (h2_head_may_begin).
 *
 * A connection is HTTP/2's once identified so, or once its client's
 * preface was seen (its first bytes). */
#ifndef KMON_H2_BPF_H
#define KMON_H2_BPF_H

#include "proto.h"
#include "tcp.h"
#include "core_fixes.bpf.h"
#include "maps.bpf.h"

#define H2_FRAME_HEADER 9
#define H2_PREFACE_LEN 24
#define H2_CONTROL_FRAMES 8 /* walked at most; past them, not control */

/* "PRI " starts only the client's preface. */
static __always_inline bool h2_is_preface(const __u8 *b)
{
	return b[0] == 'P' && b[1] == 'R' && b[2] == 'I' && b[3] == ' ';
}

static __always_inline bool h2_known(const struct tcp_conn *c)
{
	return c->h2 ||
	       (c->proto_state == PROTO_DECIDED && c->proto == PROTO_HTTP2);
}

/* Plain HTTP/2 connections, each counted once (h2_counted): with
 * outcomes off, while there are some, the ingress program and the send's
 * entry walk their control frames after the protocol is identified too
 * (a response's WINDOW_UPDATEs come all along); while there are none,
 * they look at no connection for it. Never below the true number, as
 * capturing (proto.bpf.h). */
__u64 h2_plain;

/* c's bytes are HTTP/2's: its client's preface went by, or its
 * identification said so. */
static __always_inline void h2_mark(struct tcp_conn *c)
{
	c->h2 = 1;
	if (!c->tls)
		count_once(&c->h2_counted, &h2_plain);
}

/* Whether c's bytes may be HTTP/2's: known so, or not decided before
 * its first request (where the client's preface would tell). */
static __always_inline bool h2_possible(const struct tcp_conn *c)
{
	return h2_known(c) || (c->proto_state != PROTO_DECIDED && !c->requests);
}

#define H2_MAX_FRAME 16384 /* SETTINGS_MAX_FRAME_SIZE's default */

/* The payload length a frame header f gives (24 bits, big-endian). */
static __always_inline __u32 h2_frame_len(const __u8 *f)
{
	return f[0] << 16 | f[1] << 8 | f[2];
}

/* Whether the frame header f is a control frame's as RFC 9113 (6) has
 * them: its type, and a length and stream that type allows. A header
 * read in the middle of another frame (a DATA payload's bytes) passes
 * the type alone for 6 bytes in 256; then its length and stream fail. */
static __always_inline bool h2_control_frame(const __u8 *f)
{
	__u32 len = h2_frame_len(f);
	bool stream0 = !(f[5] & 0x7f) && !f[6] && !f[7] && !f[8];

	switch (f[3]) {
	case 2: /* PRIORITY */
		return len == 5 && !stream0;
	case 3: /* RST_STREAM */
		return len == 4 && !stream0;
	case 4: /* SETTINGS */
		return len % 6 == 0 && len <= H2_MAX_FRAME && stream0;
	case 6: /* PING */
		return len == 8 && stream0;
	case 7: /* GOAWAY */
		return len >= 8 && len <= H2_MAX_FRAME && stream0;
	case 8: /* WINDOW_UPDATE */
		return len == 4;
	}
	return false;
}

/* Where a frame walk from off ends: the next frame's offset, or len
 * when the frame at off is not control. */
static __always_inline __u32 h2_after(const __u8 *f, __u32 off, __u32 len)
{
	if (!h2_control_frame(f))
		return len + 1;
	return off + H2_FRAME_HEADER + h2_frame_len(f);
}

#define H2_IOVS 6 /* a writev's buffers looked at */

/* A send's first buffers: nginx writes each frame's header and its
 * payload from buffers of their own (a writev). */
struct h2_iovs {
	__u64 base[H2_IOVS];
	__u32 len[H2_IOVS];
	__u32 nr;
	__u32 total; /* bytes in them */
};

static __always_inline void h2_iovs_of(const struct iov_iter *it,
				       struct h2_iovs *v)
{
	const struct iovec *arr = iov_iter_first_iovec(it);
	__u32 nr = it->nr_segs;
	struct iovec iov;

	v->nr = 0;
	v->total = 0;
	for (int i = 0; i < H2_IOVS && i < nr; i++) {
		if (bpf_probe_read_kernel(&iov, sizeof(iov), arr + i))
			break;
		v->base[i] = (__u64)iov.iov_base;
		v->len[i] = iov.iov_len;
		v->total += v->len[i];
		v->nr = i + 1;
	}
}

#define H2_IOVS_READ 64 /* at most, by h2_iovs_read */

/* Where h2_iovs_read copies to: twice its most, so that the verifier
 * sees each piece's place and size bounded apart. */
struct h2_iovs_buf {
	__u8 b[2 * H2_IOVS_READ];
};

/* Copies up to n (below H2_IOVS_READ) bytes from offset off of the
 * buffers into dst; returns how many. A global function, verified once:
 * its loop inlined in each of a send's frame reads was walked again for
 * each (180,000 instructions a load). */
__noinline __u32 h2_iovs_read(const struct h2_iovs *v, __u32 off,
			      struct h2_iovs_buf *dst, __u32 n)
{
	__u64 done = 0, take, at;

	if (!v || !dst)
		return 0;
	if (n >= H2_IOVS_READ) /* the masks below keep 6 bits */
		n = H2_IOVS_READ - 1;
	for (int i = 0; i < H2_IOVS; i++) {
		if (i >= v->nr || done >= n)
			break;
		if (off >= v->len[i]) {
			off -= v->len[i];
			continue;
		}
		take = v->len[i] - off;
		if (take > n - done)
			take = n - done;
		at = done;
		/* the masks the compiler would drop, for the verifier */
		asm volatile("%[at] &= 63" : [at] "+r"(at));
		asm volatile("%[take] &= 63" : [take] "+r"(take));
		if (bpf_probe_read_user(dst->b + at, take,
					(const void *)(v->base[i] + off)))
			break;
		done += take;
		off = 0;
	}
	return done;
}

/* Where a message's bytes are: user memory (base), a segment's payload
 * (at off in skb) or a writev's buffers (iovs). */
struct h2_src {
	const void *base;
	struct __sk_buff *skb;
	__u32 off;
	const struct h2_iovs *iovs;
};

#define H2_FROM_USER 0
#define H2_FROM_SKB 1
#define H2_FROM_IOVS 2

/* n bytes at offset at of the message into f. from is a constant the
 * compiler folds: each program calls only the helper its type has. */
static __always_inline bool h2_load(const struct h2_src *s, int from, __u32 at,
				    __u8 *f, __u32 n)
{
	if (from == H2_FROM_SKB)
		return !bpf_skb_load_bytes(s->skb, s->off + at, f, n);
	if (from == H2_FROM_IOVS)
		return h2_iovs_read(s->iovs, at, (struct h2_iovs_buf *)f, n) ==
		       n;
	return !bpf_probe_read_user(f, n, s->base + at);
}

/* The bytes of a message of len that are the preface and control
 * frames, from the start: the offset of the first other frame, len when
 * there is none (the message is control only). f: room for a frame
 * header (2 * H2_IOVS_READ bytes from iovs). */
static __always_inline __u32 h2_control(const struct h2_src *s, int from,
					__u32 len, __u8 *f)
{
	__u32 at = 0, next;

	if (len >= H2_PREFACE_LEN && h2_load(s, from, 0, f, 4) &&
	    h2_is_preface(f))
		at = H2_PREFACE_LEN;
	for (int i = 0; i < H2_CONTROL_FRAMES && at < len; i++) {
		if (at + H2_FRAME_HEADER > len ||
		    !h2_load(s, from, at, f, H2_FRAME_HEADER))
			return at;
		next = h2_after(f, at, len);
		if (next > len)
			return next == len + 1 ? at : len;
		at = next;
	}
	return at;
}

/* The same for len bytes of user memory at s->base: a global function,
 * verified once (inlined in each of a send's hooks, its loop was walked
 * again for each: 160,000 instructions a load). Its base comes in a
 * struct: some kernels type a user pointer as memory, which a global
 * function takes only as a scalar. */
__noinline __u32 h2_control_of_user(const struct h2_src *s, __u32 len)
{
	__u8 f[H2_FRAME_HEADER];

	if (!s)
		return 0;
	return h2_control(s, H2_FROM_USER, len, f);
}

/* The same for len bytes at base, user memory. */
static __always_inline __u32 h2_control_user(const void *base, __u32 len)
{
	struct h2_src s = { .base = base };

	return h2_control_of_user(&s, len);
}

/* The same for a writev's buffers: a global function, verified once. */
__noinline __u32 h2_control_iovs(const struct h2_iovs *v, struct h2_iovs_buf *b)
{
	struct h2_src s = { .iovs = v };

	if (!v || !b)
		return 0;
	return h2_control(&s, H2_FROM_IOVS, v->total, b->b);
}

/* A send of len bytes at base (user memory) begins on c: notes whether
 * it holds only control frames (ctl_send) and returns where its first
 * other frame is, 0 when c is not HTTP/2's. The client's preface, its
 * first bytes, tells an undecided connection. */
static __always_inline __u32 h2_send_begins(struct tcp_conn *c,
					    const void *base, __u32 len)
{
	__u8 b[4];
	__u32 skip;

	c->ctl_send = 0;
	if (!base || !len)
		return 0;
	if (!h2_known(c)) {
		if (c->requests || c->phase != TCP_IDLE ||
		    c->proto_state == PROTO_DECIDED || len < H2_PREFACE_LEN ||
		    bpf_probe_read_user(b, sizeof(b), base) ||
		    !h2_is_preface(b))
			return 0;
		h2_mark(c);
	} else if (!c->h2 && !c->tls) {
		/* known by its identification alone: marked too, as the
		 * reads of the control runs (h2_control_only) go by c->h2
		 * (inside TLS, c->h2 says more: tls_h2_adopt) */
		h2_mark(c);
	}
	skip = h2_control_user(base, len);
	c->ctl_send = skip >= len;
	return skip;
}

/* A run of control-only segments [at, end) (tcp_conn.ctl_run): one word,
 * written with one store and read with one load, as the ingress program
 * writes it on one CPU while the owner's read hook reads it on another:
 * a start and an end of two runs would cover the message between. */
static __always_inline __u32 h2_run_at(__u64 run)
{
	return (__u32)run;
}

static __always_inline __u32 h2_run_end(__u64 run)
{
	return run >> 32;
}

/* The segment [seq, seq + len) is control only: the run goes on when it
 * starts at its end (a client sends a stream's WINDOW_UPDATE and the
 * connection's in segments of their own while a response comes, and one
 * read may take both), else a run begins. */
static __always_inline void h2_run_add(__u64 *run, __u32 seq, __u32 len)
{
	__u64 r = KMON_READ_ONCE(*run);
	__u32 at = h2_run_at(r), end = h2_run_end(r);

	if (end != seq || end == at)
		at = seq;
	KMON_WRITE_ONCE(*run, (__u64)(seq + len) << 32 | at);
}

/* Whether seq lies in the run [at, end). */
static __always_inline bool h2_in_control(__u32 seq, __u32 at, __u32 end)
{
	return (__s32)(seq - at) >= 0 && (__s32)(end - seq) > 0;
}

/* h2_control over len bytes at off in skb's payload: a global function,
 * verified once for both directions. */
__noinline __u32 h2_control_of_skb(struct __sk_buff *skb, __u32 off, __u32 len)
{
	struct h2_src src = { .skb = skb, .off = off };
	__u8 f[H2_FRAME_HEADER];

	if (!skb)
		return 0;
	return h2_control(&src, H2_FROM_SKB, len, f);
}

/* A segment of len bytes at off, first sequence number seq, received
 * (dir in) or sent (dir out, the egress program's) on c, plain TCP: a
 * control-only one is noted for the read or the send that moves it
 * (true); else where its first other frame is, in *skip. A client's
 * preface, its first bytes either way, tells an undecided connection. */
static __always_inline bool h2_segment(struct __sk_buff *skb,
				       struct tcp_conn *c, __u8 dir, __u32 off,
				       __u32 len, __u32 seq, __u32 *skip)
{
	__u8 b[4];

	*skip = 0;
	if (!h2_known(c) &&
	    (c->requests || c->proto_state == PROTO_DECIDED ||
	     len < H2_PREFACE_LEN || bpf_skb_load_bytes(skb, off, b, 4) ||
	     !h2_is_preface(b)))
		return false;
	if (!c->h2)
		h2_mark(c);
	*skip = h2_control_of_skb(skb, off, len);
	if (*skip < len)
		return false;
	h2_run_add(&c->ctl_run[dir & 1], seq, len);
	return true;
}

/* Whether the frame header f is a HEADERS frame's: its type, and a
 * stream (a segment that starts inside a frame passes the type alone
 * for 1 byte in 256). */
static __always_inline bool h2_headers_frame(const __u8 *f)
{
	return f[3] == 1 && ((f[5] & 0x7f) | f[6] | f[7] | f[8]);
}

/* Whether the frames at off in skb's payload, past a segment's control
 * frames, may begin a message's head on c (plain HTTP/2): a HEADERS
 * frame, or a DATA frame that ends in the segment before one (a
 * client's next request behind its last one's body: its method and
 * route), or a control frame past those h2_control walks. A DATA frame
 * alone goes on a message whose HEADERS came before, as does a segment
 * that starts inside a frame: taken as a head, either would push out
 * the HEADERS kept from an earlier segment (a server's DATA leaving
 * apart from its HEADERS after its client's SETTINGS ACK moved the
 * acknowledgement, both read at once). No :status is read without its
 * HEADERS first (outcome.h). */
static __always_inline bool
h2_head_may_begin(struct __sk_buff *skb, const struct tcp_conn *c, __u32 off)
{
	__u8 f[H2_FRAME_HEADER];
	__u32 next;

	if (!c->h2 || c->tls)
		return true;
	if (bpf_skb_load_bytes(skb, off, f, sizeof(f)))
		return false;
	if (h2_headers_frame(f) || h2_control_frame(f))
		return true;
	if (f[3] != 0) /* not DATA */
		return false;
	next = off + H2_FRAME_HEADER + h2_frame_len(f);
	return next < skb->len &&
	       !bpf_skb_load_bytes(skb, next, f, sizeof(f)) &&
	       h2_headers_frame(f);
}

/* A read from *seq on begins a message: its first byte is past the
 * control-only segments the read starts in, if so (plain TCP; both
 * ends' records name the message by it, and its head was taken there).
 * Moves *seq there; returns the message's bytes so far: minus the
 * control frames' (as unsigned: the read's length is added next). */
static __always_inline __u64 h2_message_begins(const struct tcp_conn *c,
					       __u32 *seq)
{
	__u64 run = KMON_READ_ONCE(c->ctl_run[PROTO_DIR_IN]);
	__u32 end = h2_run_end(run), ctl = end - *seq;

	if (!c->h2 || c->tls || !h2_in_control(*seq, h2_run_at(run), end))
		return 0;
	*seq = end;
	return -(__u64)ctl;
}

/* Whether a read (dir in) or a send (dir out) of len bytes from seq on
 * lies in a run of control-only segments (plain TCP). */
static __always_inline bool h2_control_only(const struct tcp_conn *c, __u8 dir,
					    __u32 seq, int len)
{
	__u64 run = KMON_READ_ONCE(c->ctl_run[dir & 1]);
	__u32 end = h2_run_end(run);

	return c->h2 && len > 0 && h2_in_control(seq, h2_run_at(run), end) &&
	       (__s32)(end - (seq + len)) >= 0;
}

#endif
