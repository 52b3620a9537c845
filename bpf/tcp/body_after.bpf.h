/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Whether a received HTTP/1 message's head came alone, its body still
 * to come (for request paths, tcp_handler.bpf.h). An event loop such as
 * nginx's waits for that body before it goes on with the request:
 *  - a request: Python's http.client sends a POST's head and body in
 *    two sends; nginx reads the head, polls, reads the body and only
 *    then makes the request's call;
 *  - a call's answer: Python's http.server writes its head and its body
 *    in two sends; nginx holds its own answer back until the body is in
 *    (postpone_output), and only then answers its request.
 * kmond can tell when the head says so: the segment that carried it ends
 * where the head ends (a blank line), and its first HEAD_SCAN bytes give
 * a Content-Length that is not 0. A Content-Length past them, a chunked
 * body, or a body up to the close says nothing: not known to wait. */
#ifndef KMON_BODY_AFTER_BPF_H
#define KMON_BODY_AFTER_BPF_H

#include "outcome.h"
#include "proto.h"
#include "tcp.h"

#define CRLFCRLF 0x0a0d0a0d /* "\r\n\r\n", as a little-endian load */
#define CONTENT_LENGTH "content-length:"
#define CONTENT_LENGTH_LEN (sizeof(CONTENT_LENGTH) - 1)
#define HEAD_SCAN 256 /* a power of two */
#define VALUE_SKIP 8 /* spaces and zeros before a value's first digit */

/* A head's first bytes, loaded from its segment to be read. */
struct head_scan {
	__u32 len;
	__u8 data[HEAD_SCAN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct head_scan);
} head_scans SEC(".maps");

/* The methods whose requests carry bodies in practice. */
static __always_inline bool method_sends_body(const __u8 *d, __u32 len)
{
	if (len < 6)
		return false;
	return (d[0] == 'P' && d[1] == 'O' && d[2] == 'S' && d[3] == 'T') ||
	       (d[0] == 'P' && d[1] == 'U' && d[2] == 'T' && d[3] == ' ') ||
	       (d[0] == 'P' && d[1] == 'A' && d[2] == 'T' && d[3] == 'C');
}

/* An HTTP/1 response whose status allows a body: not an interim 1xx,
 * not 204 or 304. */
static __always_inline bool status_allows_body(const __u8 *d, __u32 len)
{
	__u32 status = outcome_http_code(d, len);

	return status >= 200 && status != 204 && status != 304;
}

/* Whether the line at data[i] is a Content-Length header whose value,
 * whole inside the scanned bytes, is not 0. Letters are compared with
 * their 0x20 bit set ('-' and ':' have it): case does not matter. A
 * global function, verified once: inlined, its loops would be walked
 * again at each of the head's bytes (300,000 instructions a load). */
__noinline __u32 content_length_not_zero(const struct head_scan *h, __u32 i,
					 __u32 len)
{
	const char name[] = CONTENT_LENGTH;
	__u32 k, at;
	__u8 b;

	if (!h || i >= len || i >= HEAD_SCAN)
		return 0;
	for (k = 0; k < CONTENT_LENGTH_LEN; k++) {
		at = i + k;
		if (at >= len || at >= HEAD_SCAN)
			return 0;
		/* checked on the register it indexes with: the compiler
		 * would check a copy */
		asm volatile("%[at] &= 255" : [at] "+r"(at));
		if ((h->data[at] | 0x20) != name[k])
			return 0;
	}
	/* a few spaces and leading zeros, then a digit 1-9 */
	for (k = 0; k < VALUE_SKIP; k++) {
		at = i + CONTENT_LENGTH_LEN + k;
		if (at >= len || at >= HEAD_SCAN)
			return 0;
		asm volatile("%[at] &= 255" : [at] "+r"(at));
		b = h->data[at];
		if (b == ' ' || b == '\t' || b == '0')
			continue;
		return b >= '1' && b <= '9';
	}
	return 0;
}

/* Whether head h gives a Content-Length not 0: a global function,
 * verified once, as its loop would weigh on every caller. */
__noinline __u32 head_promises_body(const struct head_scan *h)
{
	__u32 len, i;

	if (!h)
		return 0;
	len = h->len < HEAD_SCAN ? h->len : HEAD_SCAN;
	for (i = 1; i < len && i < HEAD_SCAN; i++) {
		if (h->data[i - 1] != '\n' || (h->data[i] | 0x20) != 'c')
			continue;
		if (content_length_not_zero(h, i, len))
			return 1;
	}
	return 0;
}

/* The segment of len bytes at off, received, begins a message: that
 * length when it is an HTTP/1 head alone (it ends with a blank line)
 * whose body is still to come (body_after in struct tcp_req_head and
 * tcp_resp_head), else 0. A global function, verified once for its
 * callers. */
__noinline __u32 body_after_of(struct __sk_buff *skb, __u32 off, __u32 len)
{
	struct head_scan *h;
	__u32 tail, zero = 0, n;

	if (!skb || len < 12 || len > 0xffff ||
	    bpf_skb_load_bytes(skb, off + len - 4, &tail, 4) ||
	    tail != CRLFCRLF)
		return 0;
	h = bpf_map_lookup_elem(&head_scans, &zero);
	if (!h)
		return 0;
	n = (len < HEAD_SCAN ? len : HEAD_SCAN) - 1;
	asm volatile("%[n] &= 255" : [n] "+r"(n));
	n++;
	if (bpf_skb_load_bytes(skb, off, h->data, n))
		return 0;
	h->len = n;
	return head_promises_body(h) ? len : 0;
}

/* A segment of len bytes at off, on c in direction dir, begins a
 * message (a request or an answer) whose first bytes, cap of them, are
 * in head: its body_after (0 for a segment sent). The first bytes say
 * at no cost whether a body may follow (a GET's does not): the segment
 * is looked at further only then. */
static __always_inline __u16 body_after(struct __sk_buff *skb,
					const struct tcp_conn *c, __u8 dir,
					bool request, const __u8 *head,
					__u32 cap, __u32 off, __u32 len)
{
	if (dir != PROTO_DIR_IN ||
	    (c->proto_state == PROTO_DECIDED && c->proto != PROTO_HTTP))
		return 0;
	if (request ? !method_sends_body(head, cap) :
		      !status_allows_body(head, cap))
		return 0;
	return body_after_of(skb, off, len);
}

#endif
