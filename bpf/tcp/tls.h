/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* TLS in plaintext: the per-thread state of an SSL call and the heads
 * its reads leave (bpf/tcp/tls.bpf.h; shared with user space for the
 * skeleton, fixed-width types only). */
#ifndef KMON_TLS_H
#define KMON_TLS_H

#include "proto.h"

/* What an SSL call in progress is. */
#define TLS_CALL_HANDSHAKE 1
#define TLS_CALL_READ 2
#define TLS_CALL_WRITE 3

/* An SSL call in progress, per thread. */
struct tls_call {
	__u64 buf; /* the plaintext's buffer */
	__u64 count_at; /* SSL_read_ex's readbytes, SSL_write_ex's written;
			  * 0: SSL_read's, SSL_write's return value */
	__u64 sk; /* the socket its first tcp hook saw, 0: none yet */
	__u32 num; /* bytes asked for, or given */
	__u8 kind; /* TLS_CALL_* */
	__u8 sent; /* a write: its first send was seen */
	__u8 head; /* a read began a message: head_is_req, head_seq */
	__u8 head_is_req;
	__u32 head_seq;
	__u64 ssl; /* the SSL object */
	__u8 sample; /* a read owes the protocol sample in s */
	__u8 h2; /* 1: HTTP/2's (bpf/tcp/h2.bpf.h), 2: may be (a read's
		  * return looks for the client's preface) */
	__u8 seen; /* a read: a tcp hook saw its socket's bytes move */
	__u8 ctl; /* a write of HTTP/2 control frames only */
	__u64 cookie; /* the connection's plaintext cookie, 0: not seen */
	__u8 begins; /* a read whose socket bytes began a message */
	__u8 cont; /* a read served from OpenSSL's buffer that goes on with
		    * the message its SSL object's last read began (tls_ssl) */
	__u8 held; /* a read held until its plaintext is known
		    * (tls_hold_read) */
	__u8 no_head; /* its head is not wanted, only whether it held
		       * nothing but HTTP/2 control frames */
	__u8 frames; /* a write whose HTTP/2 frames are walked at its
		      * return (tls_frames_written) */
	__u8 pad2[3];
	struct proto_sample s; /* header only; the data comes at return */
};

/* The connection an SSL object was last seen moving, per process: a
 * read that OpenSSL serves from what an earlier one took off the
 * socket moves no socket bytes, and no tcp hook tells its connection. */
struct tls_ssl_key {
	__u64 ssl;
	__u32 tgid;
	__u32 pad;
};

struct tls_ssl {
	__u64 cookie; /* the connection's plaintext cookie */
	__u8 h2; /* HTTP/2's */
	/* the last read that moved socket bytes began a message (or took a
	 * sample): the reads OpenSSL serves from its buffer after it go on
	 * with that message (MariaDB reads a packet's 4-byte header, then
	 * its body); a write ends it (tls_ssl_seen writes the entry anew) */
	__u8 cont;
	__u8 cont_req; /* that message is a request */
	__u8 cont_head; /* its head is kept */
	__u8 samples_left; /* protocol samples the reads that go on may add */
	__u8 pad[3];
	__u8 sample_hdr[__builtin_offsetof(struct proto_sample, data)];
};

/* What the returns of SSL calls leave for the request model to take at
 * a request's end, by the connection's plaintext cookie: the heads of
 * the last request and response a read began, and the plaintext bytes
 * read and written since it last took them. The response's head first:
 * the verifier sees a head's read as up to 128 bytes (outcome.bpf.h's
 * head_cap), which must stay inside the value. */
struct tls_heads {
	struct tcp_resp_head resp;
	struct tcp_req_head req;
	__u64 bytes[2]; /* PROTO_DIR_IN, PROTO_DIR_OUT */
	/* HTTP/2: the message begun at open_seq (a request's when
	 * open_is_req) held only control frames so far, its head is still
	 * to come; h2: a read began with the client's preface */
	__u32 open_seq;
	__u8 open;
	__u8 open_is_req;
	__u8 h2;
	__u8 no_head; /* the last read's head was not wanted (tls_call) */
	/* HTTP/2: the frames the connection's SSL_writes wrote, walked from
	 * a server's first SETTINGS on (tls_frames_written): the bytes of
	 * the last frame still to come, whether the walk knows where frames
	 * begin, and whether the last DATA or HEADERS frame written ended
	 * its stream (END_STREAM): a response written whole */
	__u32 out_left;
	__u8 out_known;
	__u8 out_ended;
	__u8 pad[2];
};

#endif
