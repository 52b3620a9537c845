/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Application protocol identification: the samples the kernel captures at
 * the start of a connection and the verdicts user space hands back (event
 * ABI shared by BPF and user space: fixed-width types and #defines only).
 *
 * While a connection is undecided, the first PROTO_MAX_SEGS segments each
 * way go to user space, PROTO_SAMPLE_BYTES of payload each, with their
 * full length. User space classifies (user/protocol.c) and writes the
 * verdict into proto_verdicts under the socket's cookie; the kernel moves
 * it into the connection state at its next event and captures nothing
 * more. Samples, closes, the tcp collector's request events and the
 * requests it could not put on an edge share one ring (so a request finds
 * its connection's samples before it), told apart by their sizes. */
#ifndef KMON_PROTO_H
#define KMON_PROTO_H

#include "tcp.h"

#define PROTO_SAMPLE_BYTES 64
/* A TLS ClientHello's sample is longer: the server name comes after the
 * random, the session id and the cipher suites. */
#define PROTO_HELLO_BYTES 512
#define PROTO_MAX_SEGS 4 /* each way */
#define PROTO_MAX_VERDICTS 16384

/* Protocol ids: in tcp events, topology edges and verdicts. */
#define PROTO_UNKNOWN 0
#define PROTO_HTTP 1
#define PROTO_HTTP2 2
#define PROTO_TLS 3
#define PROTO_REDIS 4
#define PROTO_POSTGRESQL 5
#define PROTO_MYSQL 6
#define PROTO_MEMCACHED 7
#define PROTO_KAFKA 8
#define PROTO_MQTT 9
#define PROTO_AMQP 10
#define PROTO_DNS 11
#define PROTO_SSH 12
#define PROTO_ZOOKEEPER 13
#define PROTO_NR 14 /* ids are below this */

/* tcp_conn.proto_state */
#define PROTO_OFF 0 /* not identified (capture off when it began) */
#define PROTO_CAPTURING 1 /* segments go to user space */
#define PROTO_WAITING 2 /* enough captured: waits for the verdict */
#define PROTO_DECIDED 3 /* tcp_conn.proto holds the verdict */

/* proto_sample.dir: as seen by the monitored socket */
#define PROTO_DIR_IN 0
#define PROTO_DIR_OUT 1

/* The cookie of a TLS connection's plaintext (bpf/tcp/tls.bpf.h): its
 * socket's cookie with this bit, so that its samples, verdict and
 * requests are told from its ciphertext's (which named it `tls`, with
 * its server name). Socket cookies count up from 1: never this high. */
#define PROTO_TLS_COOKIE (1ULL << 63)

struct proto_sample {
	__u64 cookie; /* the socket's cookie: names the connection */
	__u64 ts; /* monotonic ns */
	struct tcp_tuple t;
	__u32 pid; /* owner's tgid, 0: not known yet */
	__u32 svc;
	__u32 len; /* payload bytes of the segment */
	__u16 caplen; /* bytes in data */
	__u8 dir;
	__u8 role; /* enum tcp_role when captured */
	__u8 seg; /* index of this segment in its direction */
	__u8 pad[7];
	__u8 data[PROTO_SAMPLE_BYTES];
};

/* A sample whose data runs on into more: a TLS ClientHello. */
struct proto_hello {
	struct proto_sample s;
	__u8 more[PROTO_HELLO_BYTES - PROTO_SAMPLE_BYTES];
};

/* The connection closed undecided: user space decides on what it has,
 * and moves the requests the kernel counted undecided on its edge. */
struct proto_close {
	__u64 cookie;
	struct tcp_tuple t;
	__u32 pid;
	__u32 svc;
	struct tcp_peer src; /* the edge's source, when src_known */
	__u32 requests; /* finished, all counted undecided */
	__u8 role;
	__u8 src_known;
	__u8 src_external; /* on the shared "external" edge */
	__u8 pad;
};

struct proto_verdict {
	__u32 proto;
	__u32 pad;
};

#endif
