/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Request outcomes: whether a request succeeded, read from the first bytes
 * of its response (docs/design/outcomes.md). Shared by the BPF programs
 * and user space (fixed-width types only, no libc, no global data), so
 * that one function decides `error` wherever it is counted: the kernel's
 * aggregates and user space's records cannot disagree.
 *
 * The function must pass the verifier on a buffer of OUTCOME_RESP_HEAD
 * bytes (a map value or a stack array) whose captured length is only
 * known to be at most that: every byte at a variable offset is read
 * through outcome_at(), which checks the offset against the captured
 * length and the buffer's size; loops have small constant trip counts.
 * It never reads a byte at or past resp_len (the kernel's buffer holds
 * an earlier response's bytes there), and a head too short to say gives
 * unknown. Where a protocol's head cannot show the whole answer (rows
 * then an error) the function's comment says what is taken for it. */
#ifndef KMON_OUTCOME_H
#define KMON_OUTCOME_H

#include "proto.h"

#define OUTCOME_REQ_HEAD 128 /* request bytes captured, as the client sent */
#define OUTCOME_RESP_HEAD 48 /* response bytes captured */

struct outcome {
	/* The protocol's numeric code: HTTP status, MySQL errno, DNS rcode,
	 * ZooKeeper err as (__u32)(__s32), MQTT return code; else 0. */
	__u32 status;
	__u8 known; /* 1: the outcome is known (error is meaningful) */
	__u8 error; /* 1: failed, by the protocol's meaning and the side */
	__u8 status_class; /* HTTP and HTTP/2: 1..5, else 0 */
	__u8 has_status; /* 1: status holds a code (0 may be one) */
};

/* Inlined into the caller in BPF too: each helper gets its constant
 * arguments folded, and no BPF-to-BPF call carries a buffer pointer. */
#define OUTCOME_INLINE static inline __attribute__((always_inline))
#ifdef __clang__
#define OUTCOME_UNROLL _Pragma("unroll")
#else
#define OUTCOME_UNROLL
#endif

/* The byte at off, or 0 past the capture (len) or the buffer (size, a
 * constant). The empty asm makes the compiler check and index with one
 * 64-bit register: left alone, it zero-extends a 32-bit offset into two
 * copies, and the verifier sees the bound on the one that does not
 * index. */
OUTCOME_INLINE __u32 outcome_byte(const __u8 *b, __u32 len, __u32 off,
				  __u32 size)
{
	__u64 i = off;

#ifdef __bpf__
	asm volatile("" : "+r"(i));
#endif
	if (i >= size || i >= len)
		return 0;
	return b[i];
}

/* In a response head (OUTCOME_RESP_HEAD bytes). */
OUTCOME_INLINE __u32 outcome_at(const __u8 *b, __u32 len, __u32 off)
{
	return outcome_byte(b, len, off, OUTCOME_RESP_HEAD);
}

/* In a request head (OUTCOME_REQ_HEAD bytes). */
OUTCOME_INLINE __u32 outcome_req_at(const __u8 *b, __u32 len, __u32 off)
{
	return outcome_byte(b, len, off, OUTCOME_REQ_HEAD);
}

OUTCOME_INLINE __u32 outcome_be16(const __u8 *b, __u32 len, __u32 off)
{
	return outcome_at(b, len, off) << 8 | outcome_at(b, len, off + 1);
}

OUTCOME_INLINE __u32 outcome_be32(const __u8 *b, __u32 len, __u32 off)
{
	return outcome_be16(b, len, off) << 16 | outcome_be16(b, len, off + 2);
}

OUTCOME_INLINE void outcome_set(struct outcome *o, __u32 error)
{
	o->known = 1;
	o->error = error != 0;
}

OUTCOME_INLINE void outcome_set_status(struct outcome *o, __u32 status,
				       __u32 error)
{
	outcome_set(o, error);
	o->status = status;
	o->has_status = 1;
}

/* Whether t (a byte) is in the set of bytes whose bits are set in
 * (hi:lo): one test, where a chain of comparisons would give the
 * verifier a path per member. */
OUTCOME_INLINE __u32 outcome_in_set(__u32 t, __u64 lo, __u64 hi)
{
	return t < 128 && (((t < 64 ? lo : hi) >> (t & 63)) & 1);
}

/* An HTTP status (final: 1xx are interim, the real one follows):
 * the server failed on 5xx; its client on 4xx too (OpenTelemetry). */
OUTCOME_INLINE void outcome_http_status(struct outcome *o, __u32 side,
					__u32 status)
{
	if (status < 200 && status != 101)
		return;
	if (status > 599)
		return;
	outcome_set_status(o, status,
			   status >= 500 ||
				   (side == TCP_SIDE_CLIENT && status >= 400));
	o->status_class = status / 100;
}

/* Three ASCII digits at off, or 0. */
OUTCOME_INLINE __u32 outcome_digits3(const __u8 *b, __u32 len, __u32 off)
{
	__u32 d0 = outcome_at(b, len, off) - '0';
	__u32 d1 = outcome_at(b, len, off + 1) - '0';
	__u32 d2 = outcome_at(b, len, off + 2) - '0';

	if (off + 3 > len || d0 > 9 || d1 > 9 || d2 > 9)
		return 0;
	return d0 * 100 + d1 * 10 + d2;
}

/* The status of an HTTP/1 response head: "HTTP/1.x NNN", then a space
 * or the line's end (without that byte "HTTP/1.1 404" could be the
 * start of anything); 0 when the head shows none. */
OUTCOME_INLINE __u32 outcome_http_code(const __u8 *b, __u32 len)
{
	if (len < 13 || b[0] != 'H' || b[1] != 'T' || b[2] != 'T' ||
	    b[3] != 'P' || b[4] != '/' || b[5] != '1' || b[6] != '.' ||
	    (b[7] != '0' && b[7] != '1') || b[8] != ' ' ||
	    (b[12] != ' ' && b[12] != '\r'))
		return 0;
	return outcome_digits3(b, len, 9);
}

OUTCOME_INLINE void outcome_http(struct outcome *o, __u32 side, const __u8 *b,
				 __u32 len)
{
	outcome_http_status(o, side, outcome_http_code(b, len));
}

#define OUTCOME_H2_FRAMES 5 /* a 48-byte head holds at most 5 headers */
#define OUTCOME_H2_REQ_FRAMES 8 /* frames walked in a request head */
#define OUTCOME_H2_PREFACE 24 /* "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" */
#define OUTCOME_H2_HEADERS 0x1
#define OUTCOME_H2_PRIORITY 0x2
#define OUTCOME_H2_SETTINGS 0x4
#define OUTCOME_H2_PING 0x6
#define OUTCOME_H2_WINDOW_UPDATE 0x8
/* The frames that may come before a response's HEADERS, as a mask. */
#define OUTCOME_H2_SKIPPED                                     \
	(1 << OUTCOME_H2_PRIORITY | 1 << OUTCOME_H2_SETTINGS | \
	 1 << OUTCOME_H2_PING | 1 << OUTCOME_H2_WINDOW_UPDATE)
#define OUTCOME_H2_FLAG_PADDED 0x8
#define OUTCOME_H2_FLAG_PRIORITY 0x20

/* HPACK's static table (RFC 7541, appendix A), entries 8..14: :status. */
OUTCOME_INLINE __u32 outcome_hpack_status(__u32 index)
{
	switch (index) {
	case 8:
		return 200;
	case 9:
		return 204;
	case 10:
		return 206;
	case 11:
		return 304;
	case 12:
		return 400;
	case 13:
		return 404;
	case 14:
		return 500;
	}
	return 0;
}

/* Three Huffman-coded digits in the n (2 or 3) bytes at off, or 0. In
 * HPACK's code (RFC 7541, appendix B) '0'..'2' are 00000..00010 and
 * '3'..'9' 011001..011111; what follows the third digit is padding, at
 * most 7 bits, all ones. Encoders pick Huffman when it is shorter: Go's
 * and nghttp2's send 201, 302, 401 and 502 this way (RFC 7541, C.6:
 * 302 is 64 02). */
OUTCOME_INLINE __u32 outcome_huffman_digits3(const __u8 *b, __u32 len,
					     __u32 off, __u32 n)
{
	__u32 bits = outcome_at(b, len, off) << 24 |
		     outcome_at(b, len, off + 1) << 16 |
		     (n == 3 ? outcome_at(b, len, off + 2) << 8 : 0);
	__u32 status = 0, used = 0, rest;

	if (off + n > len)
		return 0;
	for (int i = 0; i < 3; i++) {
		__u32 five = (bits << used) >> 27, six = (bits << used) >> 26;

		if (five <= 2) {
			status = status * 10 + five;
			used += 5;
		} else if (six >= 25 && six <= 31) {
			status = status * 10 + six - 22;
			used += 6;
		} else {
			return 0;
		}
	}
	if (used > n * 8)
		return 0;
	rest = n * 8 - used;
	if (rest >= 8 ||
	    (rest && (bits << used) >> (32 - rest) != (1u << rest) - 1))
		return 0;
	return status;
}

/* The first field of a response's header block is :status (pseudo-
 * headers come first, and a response has only this one): an indexed
 * field 8..14, or a literal whose name is one of those and whose value
 * is three digits, plain or Huffman-coded. A dynamic-table index or a
 * dynamic table size update first: unknown. */
OUTCOME_INLINE void outcome_h2_block(struct outcome *o, __u32 side,
				     const __u8 *b, __u32 len, __u32 p)
{
	__u32 first = outcome_at(b, len, p), index, value;

	if (p >= len)
		return;
	if (first & 0x80) {
		outcome_http_status(o, side,
				    outcome_hpack_status(first & 0x7f));
		return;
	}
	if ((first & 0xc0) == 0x40) /* literal, incremental indexing */
		index = first & 0x3f;
	else if ((first & 0xe0) == 0) /* literal, not or never indexed */
		index = first & 0x0f;
	else
		return;
	if (!outcome_hpack_status(index))
		return; /* another name */
	value = outcome_at(b, len, p + 1); /* H bit, length */
	if (value == 3)
		outcome_http_status(o, side, outcome_digits3(b, len, p + 2));
	else if (value == 0x82 || value == 0x83)
		outcome_http_status(o, side,
				    outcome_huffman_digits3(b, len, p + 2,
							    value & 0x7f));
}

/* A frame header's stream id (31 bits) at off. */
#define OUTCOME_H2_STREAM(at, b, len, off)                                    \
	((at(b, len, (off) + 5) & 0x7f) << 24 | at(b, len, (off) + 6) << 16 | \
	 at(b, len, (off) + 7) << 8 | at(b, len, (off) + 8))

/* The stream a request opens: its first HEADERS frame's, after the
 * client's preface and the frames that may come before it (SETTINGS,
 * WINDOW_UPDATE, PING, PRIORITY). 0 when the head does not show it:
 * DATA first (a body still going), or no HEADERS inside the head. A
 * response answers this request only when its HEADERS are on this
 * stream: with streams in flight, the first HEADERS answered may be
 * another's. */
OUTCOME_INLINE __u32 outcome_h2_request_stream(const __u8 *b, __u32 len)
{
	__u32 off = 0;

	if (len > OUTCOME_REQ_HEAD)
		len = OUTCOME_REQ_HEAD;
	if (outcome_req_at(b, len, 0) == 'P' &&
	    outcome_req_at(b, len, 1) == 'R' &&
	    outcome_req_at(b, len, 2) == 'I' &&
	    outcome_req_at(b, len, 3) == ' ')
		off = OUTCOME_H2_PREFACE;
	for (int i = 0; i < OUTCOME_H2_REQ_FRAMES; i++) {
		__u32 flen = outcome_req_at(b, len, off) << 16 |
			     outcome_req_at(b, len, off + 1) << 8 |
			     outcome_req_at(b, len, off + 2);
		__u32 type = outcome_req_at(b, len, off + 3);

		if (off + 9 > len)
			return 0;
		if (type == OUTCOME_H2_HEADERS)
			return OUTCOME_H2_STREAM(outcome_req_at, b, len, off);
		if (!outcome_in_set(type, OUTCOME_H2_SKIPPED, 0) ||
		    flen >= OUTCOME_REQ_HEAD)
			return 0;
		off += 9 + flen;
	}
	return 0;
}

/* Frames to the first HEADERS: the server's SETTINGS, WINDOW_UPDATEs,
 * PINGs and PRIORITYs may come before it. Its :status is the request's
 * when the HEADERS are on the request's stream (stream, not 0). DATA,
 * RST_STREAM, GOAWAY or PUSH_PROMISE first, HEADERS of another stream,
 * or a head that ends before a HEADERS: unknown. */
OUTCOME_INLINE void outcome_http2(struct outcome *o, __u32 side, const __u8 *b,
				  __u32 len, __u32 stream)
{
	__u32 off = 0;

	for (int i = 0; i < OUTCOME_H2_FRAMES; i++) {
		__u32 flen = outcome_be16(b, len, off) << 8 |
			     outcome_at(b, len, off + 2);
		__u32 type = outcome_at(b, len, off + 3);
		__u32 flags = outcome_at(b, len, off + 4);
		__u32 p = off + 9;

		if (p > len)
			return;
		if (type == OUTCOME_H2_HEADERS) {
			if (!stream || OUTCOME_H2_STREAM(outcome_at, b, len,
							 off) != stream)
				return;
			/* the pad length's byte; the dependency and weight */
			p += !!(flags & OUTCOME_H2_FLAG_PADDED);
			p += !!(flags & OUTCOME_H2_FLAG_PRIORITY) * 5;
			outcome_h2_block(o, side, b, len, p);
			return;
		}
		if (!outcome_in_set(type, OUTCOME_H2_SKIPPED, 0) ||
		    flen >= OUTCOME_RESP_HEAD)
			return;
		off = p + flen;
	}
}

/* RESP2 and RESP3: a simple error '-' or a blob error '!' failed; the
 * other reply types succeeded. A push '>' or an attribute '|' is not the
 * reply itself: unknown. */
OUTCOME_INLINE void outcome_redis(struct outcome *o, const __u8 *b, __u32 len)
{
	if (len < 1)
		return;
	switch (b[0]) {
	case '-':
	case '!':
		outcome_set(o, 1);
		return;
	case '+':
	case ':':
	case '$':
	case '*':
	case '_':
	case ',':
	case '#':
	case '%':
	case '~':
	case '(':
	case '=':
		outcome_set(o, 0);
		return;
	}
}

#define OUTCOME_PG_MSGS 4

/* Sets of PostgreSQL backend message types (ASCII, below 128) as 128-bit
 * masks, bit t of (hi:lo) for type t: tested without a branch per type,
 * which keeps the verifier's paths through the message walk few.
 * RAN: the request ran (DataRow D, CommandComplete C, EmptyQueryResponse
 * I, ReadyForQuery Z, PortalSuspended s, CopyIn/Out/Both G H W, CopyData
 * d, CopyDone c, FunctionCallResponse V, Authentication R,
 * NegotiateProtocolVersion v). */
#define OUTCOME_BIT(c) (1ULL << ((c)&63))
#define OUTCOME_PG_RAN_HI                                         \
	(OUTCOME_BIT('D') | OUTCOME_BIT('C') | OUTCOME_BIT('I') | \
	 OUTCOME_BIT('Z') | OUTCOME_BIT('s') | OUTCOME_BIT('G') | \
	 OUTCOME_BIT('H') | OUTCOME_BIT('W') | OUTCOME_BIT('d') | \
	 OUTCOME_BIT('c') | OUTCOME_BIT('V') | OUTCOME_BIT('R') | \
	 OUTCOME_BIT('v'))
/* WAIT: an ErrorResponse may still follow (the extended query
 * protocol's ParseComplete 1, BindComplete 2, CloseComplete 3, NoData n,
 * ParameterDescription t, RowDescription T, ParameterStatus S,
 * BackendKeyData K, NoticeResponse N, NotificationResponse A). */
#define OUTCOME_PG_WAIT_LO \
	(OUTCOME_BIT('1') | OUTCOME_BIT('2') | OUTCOME_BIT('3'))
#define OUTCOME_PG_WAIT_HI                                        \
	(OUTCOME_BIT('n') | OUTCOME_BIT('t') | OUTCOME_BIT('T') | \
	 OUTCOME_BIT('S') | OUTCOME_BIT('K') | OUTCOME_BIT('N') | \
	 OUTCOME_BIT('A'))

/* Messages ([type][length BE32, itself included][body]) to the first
 * that says: an ErrorResponse failed; rows, a completion or ready
 * succeeded (an error after the first rows is past what kmond sees).
 * The one-byte answer to SSLRequest has no length: unknown. */
OUTCOME_INLINE void outcome_postgresql(struct outcome *o, const __u8 *b,
				       __u32 len)
{
	__u32 off = 0;

	for (int i = 0; i < OUTCOME_PG_MSGS; i++) {
		__u32 type = outcome_at(b, len, off);
		__u32 mlen = outcome_be32(b, len, off + 1);

		if (off + 5 > len || mlen < 4)
			return;
		if (type == 'E' || outcome_in_set(type, 0, OUTCOME_PG_RAN_HI)) {
			outcome_set(o, type == 'E');
			return;
		}
		if (!outcome_in_set(type, OUTCOME_PG_WAIT_LO,
				    OUTCOME_PG_WAIT_HI) ||
		    mlen >= OUTCOME_RESP_HEAD)
			return;
		off += 1 + mlen;
	}
}

/* A packet (length LE24, sequence) whose payload starts 0xff is an ERR
 * packet with its error number (LE16) next; OK (0x00), EOF (0xfe), a
 * result set's column count or LOCAL INFILE (0xfb) are success. */
OUTCOME_INLINE void outcome_mysql(struct outcome *o, const __u8 *b, __u32 len)
{
	if (len < 5 || (b[0] | b[1] | b[2]) == 0)
		return;
	if (b[4] != 0xff) {
		outcome_set(o, 0);
		return;
	}
	if (len < 7)
		return;
	outcome_set_status(o, b[5] | (__u32)b[6] << 8, 1);
}

/* Whether the head starts with word w (wlen bytes, a constant) followed
 * by a space or the line's end. */
OUTCOME_INLINE int outcome_word(const __u8 *b, __u32 len, const char *w,
				__u32 wlen)
{
	__u32 end = outcome_at(b, len, wlen);

	if (len <= wlen || (end != ' ' && end != '\r'))
		return 0;
	OUTCOME_UNROLL
	for (__u32 i = 0; i < wlen && i < OUTCOME_RESP_HEAD; i++)
		if (b[i] != (__u8)w[i])
			return 0;
	return 1;
}

/* The memcached text replies, by first letter (one word's compare per
 * path): the errors, then the rest (the classic protocol's words and
 * the meta protocol's two-letter codes); a number answers incr and decr.
 * Returns 1 for an error, 0 for an answer, 2 for no reply word. */
OUTCOME_INLINE __u32 outcome_memcached_word(const __u8 *b, __u32 len)
{
	switch (b[0]) {
	case 'E':
		if (outcome_word(b, len, "ERROR", 5))
			return 1;
		return !(outcome_word(b, len, "END", 3) ||
			 outcome_word(b, len, "EXISTS", 6) ||
			 outcome_word(b, len, "EN", 2) ||
			 outcome_word(b, len, "EX", 2)) *
		       2;
	case 'C':
		return outcome_word(b, len, "CLIENT_ERROR", 12) ? 1 : 2;
	case 'S':
		if (outcome_word(b, len, "SERVER_ERROR", 12))
			return 1;
		return !(outcome_word(b, len, "STORED", 6) ||
			 outcome_word(b, len, "STAT", 4)) *
		       2;
	case 'N':
		return !(outcome_word(b, len, "NOT_STORED", 10) ||
			 outcome_word(b, len, "NOT_FOUND", 9) ||
			 outcome_word(b, len, "NF", 2) ||
			 outcome_word(b, len, "NS", 2)) *
		       2;
	case 'V':
		return !(outcome_word(b, len, "VALUE", 5) ||
			 outcome_word(b, len, "VERSION", 7) ||
			 outcome_word(b, len, "VA", 2)) *
		       2;
	case 'D':
		return !outcome_word(b, len, "DELETED", 7) * 2;
	case 'T':
		return !outcome_word(b, len, "TOUCHED", 7) * 2;
	case 'O':
		return !outcome_word(b, len, "OK", 2) * 2;
	case 'H':
		return !outcome_word(b, len, "HD", 2) * 2;
	case 'M':
		return !outcome_word(b, len, "MN", 2) * 2;
	}
	return b[0] - '0' <= 9 ? 0 : 2;
}

/* The binary protocol's response header: magic 0x81, status BE16 at 6.
 * Key not found (1), exists (2) and not stored (5) are the text
 * protocol's NOT_FOUND, EXISTS and NOT_STORED: answers, not failures;
 * the rest (too large, invalid arguments, unknown command, out of
 * memory, ...) are its CLIENT_ERROR, ERROR and SERVER_ERROR. */
OUTCOME_INLINE void outcome_memcached(struct outcome *o, const __u8 *b,
				      __u32 len)
{
	__u32 status;

	if (len < 1)
		return;
	if (b[0] != 0x81) {
		status = outcome_memcached_word(b, len);
		if (status < 2)
			outcome_set(o, status);
		return;
	}
	if (len < 8)
		return;
	status = (__u32)b[6] << 8 | b[7];
	outcome_set_status(o, status,
			   status != 0 && status != 1 && status != 2 &&
				   status != 5);
}

/* DNS over TCP: the length (BE16), then the header; a response (QR) with
 * its RCODE in the low bits of its fourth byte. NXDOMAIN (3) is an
 * answer; SERVFAIL, REFUSED, FORMERR, ... are failures. */
OUTCOME_INLINE void outcome_dns(struct outcome *o, const __u8 *b, __u32 len)
{
	__u32 rcode;

	if (len < 6 || !(b[4] & 0x80))
		return;
	rcode = b[5] & 0xf;
	outcome_set_status(o, rcode, rcode != 0 && rcode != 3);
}

/* ZooKeeper's reply header: length, xid, zxid (8), err (BE32, signed).
 * xid 0 is the connect response's protocol version (no header) and -1 a
 * watch notification (no reply to anything): unknown; so is an err
 * outside ZooKeeper's codes (0, -1 .. -200). No node (-101) and node
 * exists (-110) are answers. */
OUTCOME_INLINE void outcome_zookeeper(struct outcome *o, const __u8 *b,
				      __u32 len)
{
	__s32 xid = (__s32)outcome_be32(b, len, 4);
	__s32 err = (__s32)outcome_be32(b, len, 16);

	if (len < 20 || xid == 0 || xid == -1 || err > 0 || err < -200)
		return;
	outcome_set_status(o, (__u32)err,
			   err != 0 && err != -101 && err != -110);
}

#define OUTCOME_MQTT_CONNACK 0x20
#define OUTCOME_MQTT_PUBACK 0x40
#define OUTCOME_MQTT_PUBREC 0x50
#define OUTCOME_MQTT_PUBCOMP 0x70
#define OUTCOME_MQTT_UNSUBACK 0xb0
#define OUTCOME_MQTT_PINGRESP 0xd0

/* CONNACK's return code (3.1.1) or reason code (5) is at its fourth
 * byte: 0 accepted. A PUBACK, PUBREC or PUBCOMP two bytes long succeeded
 * (5 drops a success's reason code); a longer one (5) carries a reason
 * code, 0x80 and up failures. PINGRESP and UNSUBACK succeeded. The rest
 * is unknown: a SUBACK's codes sit after properties in 5, and a PUBLISH
 * received is no reply. */
OUTCOME_INLINE void outcome_mqtt(struct outcome *o, const __u8 *b, __u32 len)
{
	__u32 type = outcome_at(b, len, 0), rest = outcome_at(b, len, 1);

	if (len < 2)
		return;
	if (type == OUTCOME_MQTT_CONNACK) {
		if (len >= 4 && rest >= 2)
			outcome_set_status(o, b[3], b[3] != 0);
		return;
	}
	if ((type == OUTCOME_MQTT_PUBACK || type == OUTCOME_MQTT_PUBREC ||
	     type == OUTCOME_MQTT_PUBCOMP) &&
	    rest >= 2) {
		if (rest == 2)
			outcome_set(o, 0);
		else if (len >= 5)
			outcome_set_status(o, b[4], b[4] >= 0x80);
		return;
	}
	if (type == OUTCOME_MQTT_PINGRESP || type == OUTCOME_MQTT_UNSUBACK)
		outcome_set(o, 0);
}

/* Decides o for a response head of resp_len captured bytes (the buffer
 * holds OUTCOME_RESP_HEAD), of protocol proto (PROTO_*), seen from side
 * (enum tcp_side); stream: for HTTP/2, the stream the request opened
 * (outcome_h2_request_stream), 0 unknown. Kafka (codes are in each API's
 * body), AMQP (in close methods), TLS, SSH and unknown: not known. */
OUTCOME_INLINE void outcome_classify(struct outcome *o, __u32 proto, __u32 side,
				     const __u8 *resp, __u32 resp_len,
				     __u32 stream)
{
	o->status = 0;
	o->known = 0;
	o->error = 0;
	o->status_class = 0;
	o->has_status = 0;
	if (resp_len > OUTCOME_RESP_HEAD)
		resp_len = OUTCOME_RESP_HEAD;
	switch (proto) {
	case PROTO_HTTP:
		outcome_http(o, side, resp, resp_len);
		break;
	case PROTO_HTTP2:
		outcome_http2(o, side, resp, resp_len, stream);
		break;
	case PROTO_REDIS:
		outcome_redis(o, resp, resp_len);
		break;
	case PROTO_POSTGRESQL:
		outcome_postgresql(o, resp, resp_len);
		break;
	case PROTO_MYSQL:
		outcome_mysql(o, resp, resp_len);
		break;
	case PROTO_MEMCACHED:
		outcome_memcached(o, resp, resp_len);
		break;
	case PROTO_DNS:
		outcome_dns(o, resp, resp_len);
		break;
	case PROTO_ZOOKEEPER:
		outcome_zookeeper(o, resp, resp_len);
		break;
	case PROTO_MQTT:
		outcome_mqtt(o, resp, resp_len);
		break;
	}
}

#endif
