/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Whether a received HTTP/1 request's head came alone, its body still
 * to come (for request paths, tcp_handler.bpf.h): a client such as
 * Python's http.client sends a POST's head and body in two sends, and an
 * event loop such as nginx's may read the head, then wait (poll) for
 * the body before it makes the request's call. That request waits for
 * its own bytes, which kmond can tell when the head says so: the
 * segment that carried it ends where the head ends (a blank line), and
 * its first bytes (the captured head) give a Content-Length that is
 * not 0. A longer head, whose Content-Length is past the captured
 * bytes, or a chunked body, says nothing: the request is not known to
 * wait. */
#ifndef KMON_BODY_AFTER_BPF_H
#define KMON_BODY_AFTER_BPF_H

#include "proto.h"
#include "tcp.h"

#define CRLFCRLF 0x0a0d0a0d /* "\r\n\r\n", as a little-endian load */
#define CONTENT_LENGTH "content-length:"
#define CONTENT_LENGTH_LEN (sizeof(CONTENT_LENGTH) - 1)

/* The methods whose requests carry bodies in practice. */
static __always_inline bool method_sends_body(const __u8 *d, __u32 len)
{
	if (len < 6)
		return false;
	return (d[0] == 'P' && d[1] == 'O' && d[2] == 'S' && d[3] == 'T') ||
	       (d[0] == 'P' && d[1] == 'U' && d[2] == 'T' && d[3] == ' ') ||
	       (d[0] == 'P' && d[1] == 'A' && d[2] == 'T' && d[3] == 'C');
}

/* Whether the line at data[i] is a Content-Length header whose value,
 * whole inside the captured bytes, is not 0. Letters are compared with
 * their 0x20 bit set ('-' and ':' have it): case does not matter. */
static __always_inline bool
content_length_not_zero(const struct tcp_req_head *h, __u32 i, __u32 len)
{
	const char name[] = CONTENT_LENGTH;
	__u32 k;
	__u8 b;

	for (k = 0; k < CONTENT_LENGTH_LEN; k++)
		if (i + k >= len || i + k >= TCP_REQ_HEAD ||
		    (h->data[i + k] | 0x20) != name[k])
			return false;
	/* spaces and leading zeros, then a digit 1-9 before the line ends */
	for (k = i + CONTENT_LENGTH_LEN; k < len && k < TCP_REQ_HEAD; k++) {
		b = h->data[k];
		if (b == ' ' || b == '\t' || b == '0')
			continue;
		return b >= '1' && b <= '9';
	}
	return false;
}

/* Whether head h (len captured bytes) promises a body: a global
 * function, verified once, as its loop would weigh on every caller. */
__noinline __u32 head_promises_body(const struct tcp_req_head *h)
{
	__u32 len, i;

	if (!h)
		return 0;
	len = h->len < TCP_REQ_HEAD ? h->len : TCP_REQ_HEAD;
	if (!method_sends_body(h->data, len))
		return 0;
	for (i = 1; i < len && i < TCP_REQ_HEAD; i++) {
		if (h->data[i - 1] != '\n' || (h->data[i] | 0x20) != 'c')
			continue;
		if (content_length_not_zero(h, i, len))
			return 1;
	}
	return 0;
}

/* Head h was just taken from a received segment of len bytes at off:
 * that length when the head came alone and its body is still to come
 * (struct tcp_req_head's body_after), else 0. */
static __always_inline __u16 body_after(struct __sk_buff *skb,
					const struct tcp_conn *c,
					const struct tcp_req_head *h, __u32 off,
					__u32 len)
{
	__u32 tail;

	if (len < 4 || len > 0xffff ||
	    (c->proto_state == PROTO_DECIDED && c->proto != PROTO_HTTP) ||
	    !method_sends_body(h->data, h->len))
		return 0;
	if (bpf_skb_load_bytes(skb, off + len - 4, &tail, 4) ||
	    tail != CRLFCRLF || !head_promises_body(h))
		return 0;
	return len;
}

#endif
