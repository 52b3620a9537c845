/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-request TCP latency on the server side, and the service graph:
 * event ABI shared by BPF and user space.
 *
 * Every TCP socket a monitored process reads or writes gets a tcp_conn in
 * the kernel, in the socket's own storage (or a hash keyed by its struct
 * sock *, see tcp.bpf.c): its role (server: accepted, or
 * on a listening port; client: connected), its owner, the request in
 * progress and the byte offsets of both streams. A request starts at the
 * first bytes received after the previous response and ends with the last
 * bytes sent before the next request or the close. Each finished request
 * is added to its topology edge in the kernel (counts, bytes, a log-linear
 * latency histogram), and goes to user space as an event only when the
 * requests policy wants it: topology never needs the events. */
#ifndef KMON_TCP_H
#define KMON_TCP_H

#include "histogram.h"

#define TCP_MAX_CONNS 65536
#define TCP_MAX_PEERS 65536
#define TCP_MAX_LISTEN 4096
#define TCP_MAX_CLOSING 4096
#define TCP_MAX_EDGES 1024
#define TCP_RINGBUF_BYTES (1024 * 1024)
/* User space is woken only once this much is waiting (and drains the
 * rest each interval): one wakeup per thousand requests, not per one. */
#define TCP_WAKEUP_BYTES (TCP_RINGBUF_BYTES / 8)

/* collectors.tcp.requests */
enum tcp_requests {
	TCP_REQUESTS_ALL,
	TCP_REQUESTS_NONE,
	TCP_REQUESTS_SLOW,   /* latency >= slow_ns */
	TCP_REQUESTS_SAMPLE, /* one request in `sample` */
};

struct tcp_ctl {
	__u32 requests; /* enum tcp_requests */
	__u32 sample;
	__u64 slow_ns;
};

/* Addresses are 16 bytes; IPv4 (and IPv4-mapped IPv6) in the first 4. */
struct tcp_tuple {
	__u8 laddr[16];
	__u8 raddr[16];
	__u16 lport; /* host order */
	__u16 rport;
	__u16 family; /* AF_INET or AF_INET6 */
	__u16 pad;
};

enum tcp_role {
	TCP_ROLE_UNKNOWN, /* accepted, not yet read by its owner */
	TCP_ROLE_SERVER,
	TCP_ROLE_CLIENT,
};

enum tcp_phase {
	TCP_IDLE,	/* no request yet, or a response was never begun */
	TCP_REQUEST,	/* request bytes arriving */
	TCP_RESPONSE,	/* response bytes leaving */
};

/* The process at the other end of a local connection, when monitored. */
struct tcp_peer {
	__u32 pid; /* tgid */
	__u32 svc; /* 0: none */
};

struct tcp_conn {
	struct tcp_tuple t;
	__u64 start_ns;	    /* first request byte (monotonic) */
	__u64 last_send_ns; /* last response byte so far */
	__u64 req_bytes;
	__u64 resp_bytes;
	/* Byte offsets in each stream since kmond saw the connection first:
	 * where each message starts (for joining both ends later). */
	__u64 rx_off;
	__u64 tx_off;
	__u64 req_off;	/* rx_off at the request's first byte */
	__u64 resp_off; /* tx_off at the response's first byte */
	__u32 pid;	/* tgid of the owner */
	__u32 tid;	/* thread that received the request's first bytes */
	__u32 svc;
	struct tcp_peer src; /* client owner (server side), 0: remote */
	__u32 requests;      /* finished on this connection */
	__u8 role;
	__u8 phase;
	__u8 src_known;	     /* src looked up and found */
	__u8 src_checked;    /* src looked up (once per connection) */
	__u8 load_state;     /* enum tcp_load_state (tcp_load.h) */
	__u8 pad[7];
	__u64 load_end_ns;   /* when the request last stopped being in progress */
};

/* One finished request (only when the requests policy wants it). */
struct tcp_event {
	struct tcp_tuple t;
	__u64 end_ns; /* last response byte (monotonic) */
	__u64 latency_ns;
	__u64 req_bytes;
	__u64 resp_bytes;
	__u64 req_off;
	__u64 resp_off;
	__u32 pid;
	__u32 tid;
	__u32 svc;
	__u32 pad;
	struct tcp_peer src;
};

/* A topology edge: dst is the server (its service, or its pid when it
 * has none), src the client's owner when it is on this host, else the
 * client's address. */
struct tcp_edge {
	__u32 dst_svc;
	__u32 dst_pid; /* 0 when dst_svc names it */
	__u32 src_svc;
	__u32 src_pid;	    /* 0 when src_svc names it, or remote */
	__u8 src_addr[16];  /* remote client only */
	__u16 src_family;   /* remote client only */
	__u16 pad[3];
};

/* Per edge and CPU; cumulative, user space reports the increase. */
struct tcp_edge_val {
	__u64 requests;
	__u64 req_bytes;
	__u64 resp_bytes;
	__u8 dst_addr[16]; /* the server's address, last seen */
	__u16 dst_family;
	__u16 pad[3];
	__u64 buckets[HIST_BUCKETS]; /* latency, histogram.h layout */
};

/* A listening port, from listen() seen in the kernel and from the listen
 * list user space reads (/proc/net/tcp{,6}) for listeners older than
 * kmond. */
struct tcp_listen_key {
	__u32 netns; /* network namespace inode */
	__u16 port;  /* host order */
	__u16 pad;
};

enum tcp_stat {
	TCP_REQUESTS_SEEN, /* finished requests of monitored servers */
	TCP_RB_LOST,	   /* request events the ringbuf had no room for */
	TCP_CONNS_FULL,	   /* connections with no room for their state */
	TCP_EDGES_FULL,	   /* requests with no room for their edge */
	TCP_LOADS_FULL,	   /* request starts or ends with no room for their load */
	TCP_NR_STATS,
};

#endif
