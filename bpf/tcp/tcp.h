/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-request TCP latency on the server side and the client side, and
 * the service graph: event ABI shared by BPF and user space.
 *
 * Every TCP socket a monitored process reads or writes gets a tcp_conn in
 * the kernel, in the socket's own storage (or a hash keyed by its struct
 * sock *, see tcp.bpf.c): its role (server: accepted, or
 * on a listening port; client: connected), its owner, the request in
 * progress and the byte offsets of both streams. A request starts at the
 * first bytes received after the previous response and ends with the last
 * bytes sent before the next request or the close; on the client side the
 * same with sending and receiving swapped. Each finished request
 * is added to its topology edge in the kernel (counts, bytes, a log-linear
 * latency histogram), and goes to user space as an event only when the
 * requests policy wants it, or when its edge could not be made (struct
 * tcp_edge_miss): topology needs no other event. */
#ifndef KMON_TCP_H
#define KMON_TCP_H

#include "../histogram.h"

#define TCP_MAX_CONNS 65536
#define TCP_MAX_PEERS 65536
#define TCP_MAX_LISTEN 4096
#define TCP_MAX_CLOSING 4096
#define TCP_MAX_EDGES 1024
#define TCP_MAX_CLIENT_OFF 256 /* services with client: false */
#define TCP_MAX_THREADS 32768 /* threads reading server requests */
/* requests that waited for their body at once (tcp_handler.bpf.h) */
#define TCP_MAX_BODY_WAITS 8192
#define TCP_MAX_LINK_SVCS 1024 /* services counted apart in links */
#define TCP_RINGBUF_BYTES (2 * 1024 * 1024)
/* User space is woken only once this much is waiting (and drains the
 * rest each interval): one wakeup per five thousand requests, not per
 * one. A wakeup cost kmond about 14 us of CPU here (a switch in a VM):
 * at 1/8 of a 1 MiB ring they were 7% of its time at 100k requests/s.
 * The other half holds 55 ms of such a stream while user space comes. */
#define TCP_WAKEUP_BYTES (TCP_RINGBUF_BYTES / 2)

/* Protocol slots of an edge: the ids of proto.h, then undecided. */
#define TCP_PROTO_SLOTS 16
#define TCP_PROTO_UNDECIDED 15

/* collectors.tcp.requests */
enum tcp_requests {
	TCP_REQUESTS_ALL,
	TCP_REQUESTS_NONE,
	TCP_REQUESTS_SLOW, /* latency >= slow_ns */
	TCP_REQUESTS_SAMPLE, /* one request in `sample` */
};

struct tcp_ctl {
	__u32 requests; /* enum tcp_requests */
	__u32 sample;
	__u64 slow_ns;
	__u32 no_client; /* 1: no client side for any service */
	__u32 some_no_client; /* 1: client_off lists services */
	__u32 no_load; /* 1: no load accounting (collectors.tcp.load) */
	__u32 no_paths; /* 1: no parent links (collectors.tcp.paths) */
};

/* Request paths: every request gets an id, id_prefix (bits 40..63, the
 * node's, tcp_link.c) | a serial (bits 0..39); a client call made by a
 * thread serving exactly one server request names it as its parent. */
#define TCP_ID_SERIAL_BITS 40
#define TCP_ID_SERIAL_MASK ((1ULL << TCP_ID_SERIAL_BITS) - 1)

/* How a call's parent was found (the record's `link`). */
enum tcp_link {
	TCP_LINK_NONE, /* no parent: the thread served none, or several */
	TCP_LINK_THREAD, /* the calling thread read it and has not answered */
	TCP_LINK_SPAWN, /* the thread that created the caller serves it */
	/* The caller's handler ran for it (bpf/tcp/tcp_handler.bpf.h): */
	TCP_LINK_CONNECT, /* its connection opened right after it was read */
	TCP_LINK_INLINE, /* sent right after it was read */
};

/* A thread that reads server requests, keyed by its tid. */
struct tcp_thread {
	__u64 id; /* the last request it read; 0 once that is answered */
	__u64 serving; /* requests it read whose response has not begun */
	/* Created by thread `from` while that one served request from_id
	 * alone (0: not so): its calls are for that request while `from`
	 * still serves it alone. */
	__u64 from_id;
	__u32 from;
	/* 1 once it served several requests at once (an event loop): its
	 * calls take units (bpf/tcp/tcp_handler.bpf.h) */
	__u32 loop;
	/* Requests it serves that wait for a call's answer, each holding a
	 * unit in the units map, and the entry's birth (the first request
	 * it read): a unit of an entry made again is not this one's. */
	__u64 waiting;
	__u64 born;
};

/* Client calls per service (svc; 0: none or past TCP_MAX_LINK_SVCS),
 * per CPU, cumulative: with a parent, and without. */
struct tcp_links {
	__u64 linked;
	__u64 unlinked;
};

/* Which end of a connection a request is seen from: the server's (it
 * received the request) or the client's (it sent it). */
enum tcp_side {
	TCP_SIDE_SERVER,
	TCP_SIDE_CLIENT,
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
	TCP_ROLE_DROPPED, /* its process left the config on a reload */
};

enum tcp_phase {
	TCP_IDLE, /* no request yet, or a response was never begun */
	TCP_REQUEST, /* request bytes arriving */
	TCP_RESPONSE, /* response bytes leaving */
};

/* The process at the other end of a local connection, when monitored. */
struct tcp_peer {
	__u32 pid; /* tgid */
	__u32 svc; /* 0: none */
};

/* The first bytes of a message (request outcomes, bpf/tcp/outcome.bpf.h):
 * the method and path of an HTTP request, the status of a response. */
#define TCP_REQ_HEAD 128 /* as OUTCOME_REQ_HEAD */
#define TCP_RESP_HEAD 48 /* as OUTCOME_RESP_HEAD */

struct tcp_req_head {
	__u32 seq; /* TCP sequence number of data[0] */
	__u16 len; /* bytes in data; 0: none captured */
	/* Received: the length of the segment that carried the head, when
	 * the head ended with it and promised a body (an HTTP/1
	 * Content-Length not 0): its body is still to come. 0: not so
	 * (body_after.bpf.h). */
	__u16 body_after;
	__u8 data[TCP_REQ_HEAD];
};

struct tcp_resp_head {
	__u32 seq;
	__u16 len;
	__u16 body_after; /* as tcp_req_head's, for a call's answer */
	__u8 data[TCP_RESP_HEAD];
};

struct tcp_conn {
	struct tcp_tuple t;
	__u64 start_ns; /* first request byte (monotonic) */
	__u64 last_send_ns; /* last response byte so far (see call_ns) */
	__u64 req_bytes;
	__u64 resp_bytes;
	/* Byte offsets in each stream since kmond saw the connection first:
	 * where each message starts (for joining both ends later). */
	__u64 rx_off;
	__u64 tx_off;
	__u64 req_off; /* rx_off at the request's first byte */
	__u64 resp_off; /* tx_off at the response's first byte */
	__u32 pid; /* tgid of the owner */
	__u32 tid; /* thread that received the request's first bytes */
	__u32 svc;
	struct tcp_peer src; /* client owner (server side), 0: remote */
	__u32 requests; /* finished on this connection */
	__u8 role;
	__u8 phase;
	__u8 src_known; /* src looked up and found */
	__u8 src_checked; /* src looked up (once per connection) */
	__u32 gen; /* kmon_ctl.gen when svc was taken */
	__u8 src_external; /* remote, not a known node: the shared edge */
	__u8 src_late; /* older than kmond: src looked up again (below) */
	/* TLS read in plaintext (bpf/tcp/tls.bpf.h): tls_hs once an SSL
	 * call of its owner moved its bytes (its bytes outside SSL_read and
	 * SSL_write, the handshake's, are no request's); tls once one of
	 * those moved them (its protocol is the plaintext's). */
	__u8 tls_hs;
	__u8 tls;
	/* TCP sequence numbers of the request's and the response's first
	 * byte, as the client sent them: the same at both ends of the
	 * connection, whoever sees it and through any destination NAT. */
	__u32 req_seq;
	__u32 resp_seq;
	/* Client side: the server's owner when it is on this host and
	 * monitored (its end wrote it into server_of). */
	struct tcp_peer dst;
	__u8 dst_known;
	__u8 dst_checked;
	/* the request in progress began before the TLS did: its name is
	 * its ciphertext's (bpf/tcp/tls.bpf.h) */
	__u8 tls_pre;
	/* TLS, HTTP/2, server side: a read inside SSL_read while the
	 * response was being sent is held until its plaintext says whether
	 * it began a request (tls_hold_read, bpf/tcp/tls.bpf.h): its time,
	 * its first byte's offset and sequence number */
	__u8 tls_held;
	__u32 held_seq;
	__u64 held_ns;
	__u64 held_off;
	/* When the send in progress was entered (tcp_sendmsg_locked, or
	 * the send syscall with the hash), 0 when not seen: a client's call
	 * starts when its caller begins to send, before the server can have
	 * the bytes, and a server's response has left by the entry of its
	 * last send, before the client can have read it. */
	__u64 call_ns;
	/* Protocol identification (proto.h, bpf/tcp/proto.bpf.h). */
	__u8 proto; /* PROTO_*, once proto_state is decided */
	__u8 proto_state; /* PROTO_OFF, _CAPTURING, _WAITING, _DECIDED */
	__u8 proto_segs[2]; /* captured in, out */
	__u32 proto_next[2]; /* next sequence number expected, in, out */
	__u32 proto_gen; /* proto_verdict_gen when last looked */
	__u32 proto_pad;
	__u64 proto_cookie; /* the socket's cookie (0: none yet) */
	__u64 proto_counted; /* 1: in the count of capturing connections */
	__u64 followed_counted; /* 1: in the count of connections followed */
	__u64 h2_counted; /* 1: in the count of plain HTTP/2 connections */
	__u8 load_state; /* enum tcp_load_state (tcp_load.h) */
	__u8 target_slot; /* an occupancy target's slot + 1, 0: none */
	__u8 load_pad[2];
	__u32 load_n; /* in progress when the request arrived */
	__u64 load_end_ns; /* when the request last stopped being in progress */
	__u32 load_slot; /* its load's slot in loads + 1, 0: none yet */
	__u32 load_pad2;
	/* TCP_LOAD_IS_OPEN from the request's start until its end in the
	 * load, which takes it back atomically: the answer (load_sent) and a
	 * reset (load_closed, a softirq on another CPU) can both find it
	 * open, and only one may end it. TCP_LOAD_CLOSED_MARK once the
	 * close has passed (tcp_load.h). */
	__u64 load_open;
	/* Request paths (bpf/tcp/tcp_link.bpf.h). */
	__u64 id; /* the request in progress or last finished */
	__u64 parent; /* client side: the request it serves, 0: none */
	__u8 link; /* enum tcp_link */
	/* Client side: connected after kmond saw the connect, no call yet
	 * (its first call is linked by the connect, never by a send) */
	__u8 fresh;
	/* Server side: its request is in the bodies map (it waited for its
	 * body), to be taken out at the answer */
	__u8 body_waited;
	__u8 link_pad[5];
	/* Client side: the request its connect was made for (0: none),
	 * and the request whose unit it holds until the answer begins.
	 * Server side: unit_id is its own request's, held while the
	 * request waits for its body (tcp_handler.bpf.h). */
	__u64 connect_parent;
	__u64 unit_id;
	/* Server side: 1 while counted in its reader's serving, taken back
	 * atomically (the reader and the close may both release it). */
	__u64 holds_thread;
	/* In the conns hash (not socket storage): the socket this state is
	 * for, and how many programs hold it now (conn_hold, tcp.bpf.c). */
	__u64 sk_addr;
	__u64 users;
	/* Request outcomes (bpf/tcp/outcome.bpf.h): the first bytes of the
	 * last request and the last response begun, as they went by, and
	 * those of the request in progress and of its response, taken from
	 * them when the request model sees that message begin at the same
	 * byte. head_ack: the acknowledgement the last message each way
	 * carried (PROTO_DIR_IN, _OUT): a message begins where it moves, its
	 * sender has heard from the other end since. */
	__u32 head_ack[2];
	__u8 head_acked[2]; /* head_ack holds one */
	/* HTTP/2 (bpf/tcp/h2.bpf.h): h2 once its bytes are known to be
	 * HTTP/2's; ctl_send: the send in progress holds only connection
	 * control frames (seen at its entry); ctl_run: the last run of
	 * segments received (PROTO_DIR_IN) or sent (PROTO_DIR_OUT, seen by
	 * the egress program) that did, one after the other (plain TCP): its
	 * first sequence number (low 32 bits) and its end (high 32), in one
	 * word (h2_segment). */
	__u8 h2;
	__u8 ctl_send;
	/* HTTP/2 carrying gRPC (grpc_mark in outcome.bpf.h): its outcomes
	 * are user space's (the grpc-status) */
	__u8 grpc;
	__u64 ctl_run[2];
	struct tcp_req_head next_req;
	struct tcp_resp_head next_resp;
	struct tcp_req_head req_head;
	struct tcp_resp_head resp_head;
};

/* One finished request (only when the requests policy wants it). A
 * ring record holds one, or a batch of up to TCP_BATCH of them back to
 * back (bpf/tcp/tcp_batch.bpf.h). */
#define TCP_BATCH 16 /* a power of two */

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
	__u32 proto; /* PROTO_*, or TCP_PROTO_UNDECIDED */
	struct tcp_peer src;
	__u32 side; /* enum tcp_side */
	__u32 req_seq;
	__u32 resp_seq;
	__u32 dst_known;
	struct tcp_peer dst; /* client side, when dst_known */
	__u64 cookie; /* the socket's, for a verdict the kernel lacks */
	__u64 id;
	__u64 parent; /* 0: none */
	__u32 link; /* enum tcp_link */
	__u32 grpc; /* 1: the connection carries gRPC (tcp_conn.grpc) */
	struct tcp_req_head req_head; /* len 0: not captured */
	struct tcp_resp_head resp_head;
	/* One ring carries these and protocol samples, told apart by size
	 * (user/collectors/tcp/tcp.c asserts they differ): keeps them apart. */
	__u64 size_pad;
};

/* A topology edge: dst is the server (its service, or its pid when it
 * has none), src the client's owner when it is on this host, else the
 * client's address. Client side (a monitored client calling a server
 * this host does not monitor): src is the client, dst_addr the server. */
/* src_family of the edge every remote client that is not a known node
 * shares, per server: src "external". */
#define TCP_SRC_EXTERNAL 0xffff

/* Known node addresses (collectors.tcp.nodes), an LPM trie: data[0] is
 * the family, data[1..16] the address; prefixlen counts both. */
#define TCP_MAX_NODES 256
struct tcp_node_key {
	__u32 prefixlen;
	__u8 data[20];
};

struct tcp_edge {
	__u32 dst_svc;
	__u32 dst_pid; /* 0 when dst_svc names it */
	__u32 src_svc;
	__u32 src_pid; /* 0 when src_svc names it, or remote */
	__u8 src_addr[16]; /* remote client only */
	__u16 src_family; /* remote client only */
	__u16 pad[3];
	__u8 dst_addr[16]; /* client side only */
	__u16 dst_family; /* client side only */
	__u16 side; /* enum tcp_side */
	__u32 pad2;
};

/* A request the kernel finished on an edge it could not make, the map
 * not full. An edge's per-CPU value comes from an atomic allocation, and
 * in a burst of new edges that fails until the kernel's pools refill
 * (38 to 80 of 250 new edges in a row here). User space counts the
 * request, and reports it with the edge a later request makes, or alone
 * (user/collectors/tcp_topology.c). */
struct tcp_edge_miss {
	struct tcp_edge e;
	__u64 latency_ns;
	__u64 req_bytes;
	__u64 resp_bytes;
	__u8 dst_addr[16]; /* as account_edge writes them in the value */
	__u8 src_addr[16];
	__u16 dst_family;
	__u16 src_family;
	__u32 proto_slot; /* its index in proto_requests */
	__u8 outcome_known; /* its outcome, as tcp_edge_val counts it */
	__u8 outcome_error;
	__u8 status_class; /* 1..5, 0: none */
	__u8 pad2[5];
};

/* The edge a server's connection counts on (edge_of in tcp.bpf.c; user
 * space too, moving the requests of a connection closed undecided): its
 * client's node when known (src not NULL), else the shared "external"
 * edge (a remote client not at a known node), else the client's
 * address. */
static inline __attribute__((always_inline)) void
tcp_server_edge(struct tcp_edge *e, __u32 svc, __u32 pid,
		const struct tcp_peer *src, __u8 external,
		const struct tcp_tuple *t)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->dst_svc = svc;
	e->dst_pid = svc ? 0 : pid;
	if (src) {
		e->src_svc = src->svc;
		e->src_pid = src->svc ? 0 : src->pid;
	} else if (external) {
		e->src_family = TCP_SRC_EXTERNAL;
	} else {
		__builtin_memcpy(e->src_addr, t->raddr, 16);
		e->src_family = t->family;
	}
}

/* Per edge and CPU; cumulative, user space reports the increase. What a
 * request adds to besides its bucket comes first, in as few cache lines
 * as it takes. */
struct tcp_edge_val {
	__u64 requests;
	__u64 req_bytes;
	__u64 resp_bytes;
	/* requests whose outcome the kernel read (bpf/tcp/outcome.h), the
	 * failed ones, and HTTP's by status class (1xx at 0) */
	__u64 outcomes;
	__u64 errors;
	__u64 status_class[5];
	__u8 dst_addr[16]; /* the server's address, last seen */
	__u16 dst_family;
	__u16 pad[3];
	__u8 src_addr[16]; /* client side: the client's address, last seen */
	__u16 src_family;
	__u16 pad2[3];
	/* requests by the protocol of their connection (proto.h ids), and
	 * at TCP_PROTO_UNDECIDED those finished before their verdict */
	__u64 proto_requests[TCP_PROTO_SLOTS];
	__u64 buckets[HIST_BUCKETS]; /* latency, histogram.h layout */
};

/* A request whose outcome the kernel could not count where it ended:
 * its connection's protocol was not decided yet, or it carries gRPC
 * (whose grpc-status user space reads). User space decides it (by the
 * verdict it makes, outcome.h) and counts it on the edge and the load
 * it names. */
struct tcp_outcome_late {
	struct tcp_edge e;
	__u64 cookie; /* the connection's, for its verdict */
	__u32 load_slot; /* its load's slot + 1 (tcp_load.h), 0: none */
	__u8 on_edge; /* 0: counted by its server's end (on this host) */
	__u8 side; /* enum tcp_side */
	__u8 grpc; /* the connection carries gRPC (tcp_conn.grpc) */
	__u8 pad;
	struct tcp_resp_head resp_head;
	__u32 stream; /* HTTP/2: the stream its request opened, 0: unknown */
	__u32 proto; /* PROTO_* when decided, else TCP_PROTO_UNDECIDED */
	__u64 size_pad[2]; /* a size no other ring record has */
};

/* A listening port, from listen() seen in the kernel and from the listen
 * list user space reads (/proc/net/tcp{,6}) for listeners older than
 * kmond. */
struct tcp_listen_key {
	__u32 netns; /* network namespace inode */
	__u16 port; /* host order */
	__u16 pad;
};

/* Its value: the port listens; or, TCP_LISTEN_UNMONITORED | the config
 * generation (kmon_ctl.gen) when a socket it accepted was first read by a
 * process kmond does not monitor: its next accepted sockets get no state
 * (they would be made and dropped, their first bytes captured for no one)
 * until a monitored process reads one of them, or a reload. */
#define TCP_LISTEN_ON 1
#define TCP_LISTEN_UNMONITORED 0x80000000u

enum tcp_stat {
	TCP_REQUESTS_SEEN, /* finished requests of monitored servers */
	TCP_RB_LOST, /* request events the ringbuf had no room for */
	TCP_CONNS_FULL, /* connections with no room for their state */
	TCP_EDGES_FULL, /* requests with no room for their edge (the
			    * map full), or none in the ring to hand them
			    * to user space (struct tcp_edge_miss) */
	TCP_PROTO_LOST, /* protocol samples the ringbuf had no room for */
	TCP_LOADS_FULL, /* request starts or ends with no room for their load */
	TCP_STEPS_LOST, /* occupancy targets' steps the ringbuf had no room for */
	TCP_ACCEPTED_UNMONITORED, /* accepted sockets given state that a
				   * process kmond does not monitor read */
	TCP_NR_STATS,
};

#endif
