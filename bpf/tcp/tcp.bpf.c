// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-request TCP latency on the server side and on the client side,
 * and the service graph.
 *
 * sock_recv_length and sock_send_length fire in the reading or writing
 * process, with the socket and the byte count: they drive the request
 * model of each server-side connection (see tcp.h). inet_sock_set_state
 * tells the roles: a passive open (SYN_RECV -> ESTABLISHED) is a server
 * connection, connect() (CLOSE -> SYN_SENT) runs in the client's owner,
 * listen() marks a listening port, and CLOSE ends a connection. Sockets
 * older than kmond take their role from the listen list user space
 * writes into listen_ports. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "filter.bpf.h"
#include "maps.bpf.h"
#include "tcp.h"
#include "tcp_state.bpf.h"
#include "tcp_seq.bpf.h"
#include "proto.bpf.h"
#include "tcp_load.bpf.h"
#include "outcome.bpf.h"
#include "tls.bpf.h"
#include "tcp_link.bpf.h"
#include "tcp_batch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* --- sockets --- */

/* A field of a socket: a plain load from a BTF pointer (trusted: a
 * tp_btf argument), a helper's probe read from a plain address. */
#define SK_FIELD(trusted, sk, field) \
	((trusted) ? (sk)->field : BPF_CORE_READ(sk, field))

static __always_inline bool is_tcp(const struct sock *sk, bool trusted)
{
	__u16 family = SK_FIELD(trusted, sk, __sk_common.skc_family);

	return (family == AF_INET || family == AF_INET6) &&
	       SK_FIELD(trusted, sk, sk_protocol) == IPPROTO_TCP;
}

static __always_inline bool v4_mapped(const __u8 *a)
{
	__u64 lo;
	__u32 mid;

	__builtin_memcpy(&lo, a, 8);
	__builtin_memcpy(&mid, a + 8, 4);
	return lo == 0 && mid == bpf_htonl(0xffff);
}

/* IPv4-mapped IPv6 (a dual-stack socket reached over IPv4) reads as
 * IPv4, so both ends of one connection name it alike. */
static __always_inline void read_tuple(const struct sock *sk,
				       struct tcp_tuple *t, bool trusted)
{
	__builtin_memset(t, 0, sizeof(*t));
	t->family = SK_FIELD(trusted, sk, __sk_common.skc_family);
	t->lport = SK_FIELD(trusted, sk, __sk_common.skc_num);
	t->rport = bpf_ntohs(SK_FIELD(trusted, sk, __sk_common.skc_dport));
	if (t->family == AF_INET) {
		__u32 laddr = SK_FIELD(trusted, sk, __sk_common.skc_rcv_saddr);
		__u32 raddr = SK_FIELD(trusted, sk, __sk_common.skc_daddr);

		__builtin_memcpy(t->laddr, &laddr, 4);
		__builtin_memcpy(t->raddr, &raddr, 4);
		return;
	}
	if (trusted) {
		__builtin_memcpy(t->laddr, &sk->__sk_common.skc_v6_rcv_saddr,
				 16);
		__builtin_memcpy(t->raddr, &sk->__sk_common.skc_v6_daddr, 16);
	} else {
		BPF_CORE_READ_INTO(&t->laddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&t->raddr, sk, __sk_common.skc_v6_daddr);
	}
	if (v4_mapped(t->laddr) && v4_mapped(t->raddr)) {
		__builtin_memcpy(t->laddr, t->laddr + 12, 4);
		__builtin_memcpy(t->raddr, t->raddr + 12, 4);
		__builtin_memset(t->laddr + 4, 0, 12);
		__builtin_memset(t->raddr + 4, 0, 12);
		t->family = AF_INET;
	}
}

/* The same connection seen from its other end. */
static __always_inline void swap_tuple(const struct tcp_tuple *in,
				       struct tcp_tuple *out)
{
	__builtin_memcpy(out->laddr, in->raddr, 16);
	__builtin_memcpy(out->raddr, in->laddr, 16);
	out->lport = in->rport;
	out->rport = in->lport;
	out->family = in->family;
	out->pad = 0;
}

/* listen()s and closes of listening sockets, in every network namespace
 * (since the state hook was attached): the listen list is read again only
 * when this moved (provider__count_listens). */
__u64 listen_changes;

static __always_inline void listen_key(const struct sock *sk,
				       struct tcp_listen_key *k, bool trusted)
{
	if (trusted)
		k->netns = sk->__sk_common.skc_net.net->ns.inum;
	else
		k->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	k->port = SK_FIELD(trusted, sk, __sk_common.skc_num);
	k->pad = 0;
}

/* The listen_ports value of sk's local port (see TCP_LISTEN_ON), NULL
 * when nothing listens there. */
static __always_inline __u32 *listen_entry(const struct sock *sk, bool trusted)
{
	struct tcp_listen_key k;

	listen_key(sk, &k, trusted);
	return bpf_map_lookup_elem(&listen_ports, &k);
}

/* --- connection state --- */

/* trusted: sk is a BTF pointer (a tp_btf argument). */
static __always_inline bool in_socket(bool trusted)
{
	return trusted && conn_in_socket;
}

/* The state in a BTF socket, NULL if none: a socket that holds no BPF
 * storage at all (most of a host's) is told by one load, not a call. */
static __always_inline struct tcp_conn *sock_state(struct sock *sk)
{
	if (!sk->sk_bpf_storage)
		return NULL;
	return bpf_sk_storage_get(&sock_conns, sk, 0, 0);
}

static __always_inline struct tcp_conn *conn_find(const struct sock *sk,
						  bool trusted)
{
	__u64 skp = (__u64)sk;

	if (in_socket(trusted))
		return sock_state((struct sock *)sk);
	return bpf_map_lookup_elem(&conns, &skp);
}

/* Connections with state, each counted once (followed_counted): while
 * there are none, a send's entry has no send to stamp, a client's call
 * or a server's response (the send-entry programs then look up no
 * socket). Never below the true number, as capturing (proto.bpf.h). */
__u64 followed;

static __always_inline void conn_forget(const struct sock *sk,
					struct tcp_conn *c, bool trusted)
{
	__u64 skp = (__u64)sk;

	proto_uncount(c);
	uncount_once(&c->followed_counted, &followed);
	uncount_once(&c->h2_counted, &h2_plain);
	if (in_socket(trusted))
		bpf_sk_storage_delete(&sock_conns, (struct sock *)sk);
	/* closed while held: the last holder deletes it (conn_hold) */
	else if (!(KMON_READ_ONCE(c->users) &&
		   KMON_READ_ONCE(c->load_open) == TCP_LOAD_CLOSED_MARK))
		bpf_map_delete_elem(&conns, &skp);
}

static __always_inline __u32 config_gen(void)
{
	struct kmon_ctl *ctl;
	__u32 zero = 0;

	ctl = bpf_map_lookup_elem(&kmon_ctl, &zero);
	return ctl ? ctl->gen : 0;
}

/* Whether the listener that accepted sk is known to serve no monitored
 * process (under this config): its accepted sockets get no state. */
static __always_inline bool listener_unmonitored(const struct sock *sk,
						 bool trusted)
{
	__u32 *v = listen_entry(sk, trusted);

	return v && (*v & TCP_LISTEN_UNMONITORED) &&
	       *v == (TCP_LISTEN_UNMONITORED | config_gen());
}

/* A new state is built here, whole, before it is stored: one the
 * socket's close or a reset on another CPU could find half made would be
 * dropped under the program still filling it. Too large for the stack; a
 * slot per program nested on the CPU (one in a process, one in the
 * softirq that interrupts it). */
#define CONN_NEST 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CONN_NEST);
	__type(key, __u32);
	__type(value, struct tcp_conn);
} conn_build SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} conn_build_depth SEC(".maps");

/* A zeroed state with its owner's fields, in this nesting level's slot;
 * NULL when the levels are taken. conn_built() gives the slot back. */
static __always_inline struct tcp_conn *conn_building(__u64 *depth, __u8 role,
						      __u32 tgid, __u32 svc)
{
	struct tcp_conn *c;
	__u32 level;

	level = __sync_fetch_and_add(depth, 1);
	c = bpf_map_lookup_elem(&conn_build, &level);
	if (!c)
		return NULL;
	__builtin_memset(c, 0, sizeof(*c));
	c->role = role;
	c->pid = tgid;
	c->svc = svc;
	c->gen = config_gen();
	c->proto_state = proto_capture ? PROTO_CAPTURING : PROTO_OFF;
	return c;
}

/* A socket's state, made unless it has one (which then wins). */
static __always_inline struct tcp_conn *
new_conn(const struct sock *sk, bool trusted, __u8 role, __u32 tgid, __u32 svc)
{
	__u32 zero = 0;
	__u64 *depth = bpf_map_lookup_elem(&conn_build_depth, &zero);
	struct tcp_conn *c, *cp = NULL;
	__u64 skp = (__u64)sk;
	long err = 0;

	if (!depth)
		return NULL;
	c = conn_building(depth, role, tgid, svc);
	if (c)
		c->sk_addr = skp;
	if (c && in_socket(trusted))
		cp = bpf_sk_storage_get(&sock_conns, (struct sock *)sk, c,
					BPF_SK_STORAGE_GET_F_CREATE);
	else if (c)
		err = bpf_map_update_elem(&conns, &skp, c, BPF_NOEXIST);
	/* Fetching: the full barrier conn_of's second look at sk_ending
	 * needs after the state is stored (see sk_order). */
	sk_order(depth, -1);
	if (in_socket(trusted)) {
		/* NULL too when another CPU made it first: use theirs. */
		if (!cp)
			cp = bpf_sk_storage_get(&sock_conns, (struct sock *)sk,
						0, 0);
	} else {
		if (!c || (err && err != -EEXIST)) /* full */
			stat_inc(&tcp_stats, TCP_CONNS_FULL);
		cp = bpf_map_lookup_elem(&conns, &skp);
	}
	if (!cp) {
		if (in_socket(trusted))
			stat_inc(&tcp_stats, TCP_CONNS_FULL);
		return NULL;
	}
	proto_count(cp);
	count_once(&cp->followed_counted, &followed);
	return cp;
}

static __always_inline void remember_client(struct tcp_conn *c)
{
	struct tcp_peer peer = { .pid = c->pid, .svc = c->svc };

	bpf_map_update_elem(&peers, &c->t, &peer, BPF_ANY);
}

static __always_inline void load_closed(struct tcp_conn *c);
static __always_inline void link_answered(struct tcp_conn *c);

/* Whether sk is closed, or about to be: a reset (a timeout, an abort)
 * sets the error before the close, whose program may then run on another
 * CPU, and take the state away, while the state still reads open. (An
 * ICMP error under IP_RECVERR sets it too, with no close coming: such a
 * socket then goes unfollowed until its error is read.) */
static __always_inline bool sk_ending(const struct sock *sk, bool trusted)
{
	return SK_FIELD(trusted, sk, __sk_common.skc_state) == TCP_CLOSE ||
	       SK_FIELD(trusted, sk, sk_err);
}

/* In the conns hash, a deleted element is given to the next state made
 * (on that CPU: often a new connection's, microseconds later), even while
 * a program that found it before the delete still writes to it: its
 * request would begin on another connection's state, or end one there.
 * So a program reading or writing a socket holds its state while it
 * runs, and the close deletes a state nobody holds; the last holder
 * deletes one closed while held (conn_release). The close marks
 * load_open, then reads users; a holder counts itself in users, then
 * reads load_open, each side with a full barrier between (fetching
 * atomics): one of the two sees the other. A state given to another
 * socket between the holder's lookup and its count is told by sk_addr.
 * A closed state is not held: as if the close had deleted it first.
 * Socket storage needs none of it: freed after an RCU grace period,
 * with its socket. */
static __always_inline bool conn_hold(const struct sock *sk, struct tcp_conn *c,
				      bool trusted);
static __always_inline void conn_release(struct tcp_conn *c, bool trusted);

/* conn_of's work: c, the socket's state held (or none yet). */
static __always_inline struct tcp_conn *
conn_own(const struct sock *sk, struct tcp_conn *c, bool trusted)
{
	__u32 tgid, svc, *lv;
	__u8 role;

	/* A dropped connection is measured by no side until it closes. */
	if (c && c->role != TCP_ROLE_UNKNOWN)
		return c->role == TCP_ROLE_DROPPED ? NULL : c;
	/* Other sockets (a Unix socket, UDP) fire these hooks too: with a
	 * BTF pointer two loads tell, cheaper than the process's lookup. */
	if (!c && trusted && !is_tcp(sk, true))
		return NULL;
	/* The process first: most of a host's sockets are no one's we
	 * monitor, and reading the socket costs more than a lookup (but
	 * for a BTF pointer, above). */
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (!kmon_selected_tgid(tgid, &svc)) {
		if (c) { /* accepted by a process nobody monitors */
			stat_inc(&tcp_stats, TCP_ACCEPTED_UNMONITORED);
			lv = listen_entry(sk, trusted);
			if (lv)
				*lv = TCP_LISTEN_UNMONITORED | config_gen();
			proto_closed(c); /* its first bytes: for no one */
			load_closed(c); /* no request starts on it now */
			conn_forget(sk, c, trusted);
		}
		return NULL;
	}
	/* A closed (or closing) socket's last bytes start nothing new. */
	if (!c && ((!trusted && !is_tcp(sk, false)) || sk_ending(sk, trusted)))
		return NULL;
	if (c) { /* accepted: its owner reads or writes it first */
		c->role = TCP_ROLE_SERVER;
		c->pid = tgid;
		c->svc = svc;
		c->gen = config_gen();
		read_tuple(sk, &c->t, trusted);
		return c;
	}
	/* Older than kmond, or a client: the listen list tells. A monitored
	 * process serves from this listener: its accepted sockets are
	 * followed again. */
	lv = listen_entry(sk, trusted);
	role = lv ? TCP_ROLE_SERVER : TCP_ROLE_CLIENT;
	if (lv && *lv != TCP_LISTEN_ON)
		*lv = TCP_LISTEN_ON;
	c = new_conn(sk, trusted, role, tgid, svc);
	if (!c || !conn_hold(sk, c, trusted))
		return NULL;
	/* The close may have run on another CPU since the look above, and
	 * found no state to end: a request begun on a state made now would
	 * stay in progress for good (and, in the conns hash, the state too).
	 * Looked at again now that the state is there: a close from now on
	 * finds it. Each side writes, then reads what the other wrote, with
	 * a full barrier between (sk_order, in new_conn and on_close): one
	 * of the two sees the other. */
	if (sk_ending(sk, trusted)) {
		/* what the close does: another thread may have begun a
		 * request on the state since it was made */
		load_closed(c);
		link_answered(c);
		conn_forget(sk, c, trusted);
		conn_release(c, trusted);
		return NULL;
	}
	read_tuple(sk, &c->t, trusted);
	if (role == TCP_ROLE_CLIENT)
		remember_client(c);
	else
		c->src_late = 1;
	return c;
}

static __always_inline bool conn_hold(const struct sock *sk, struct tcp_conn *c,
				      bool trusted)
{
	if (in_socket(trusted))
		return true;
	sk_order(&c->users, 1);
	if (KMON_READ_ONCE(c->sk_addr) == (__u64)sk &&
	    KMON_READ_ONCE(c->load_open) != TCP_LOAD_CLOSED_MARK)
		return true;
	conn_release(c, trusted);
	return false;
}

/* Held no more; deleted by the last holder if closed meanwhile (by the
 * address it is for: the holder's socket, or another one's, conn_hold
 * found). */
static __always_inline void conn_release(struct tcp_conn *c, bool trusted)
{
	__u64 skp, old;

	if (in_socket(trusted))
		return;
	old = __sync_fetch_and_add(&c->users, -1);
	if (old != 1 || KMON_READ_ONCE(c->load_open) != TCP_LOAD_CLOSED_MARK)
		return;
	skp = KMON_READ_ONCE(c->sk_addr);
	if (bpf_map_lookup_elem(&conns, &skp) == c)
		bpf_map_delete_elem(&conns, &skp);
}

/* The state of a socket the current process reads or writes: made on
 * first sight when the process is monitored; NULL when it is none of
 * ours. Known sockets cost one lookup and no read of the socket. Held
 * (conn_hold): the caller lets it go with conn_release. */
static __always_inline struct tcp_conn *conn_of(const struct sock *sk,
						bool trusted)
{
	struct tcp_conn *c = conn_find(sk, trusted), *own;

	if (c && !conn_hold(sk, c, trusted))
		return NULL;
	own = conn_own(sk, c, trusted);
	if (c && own != c)
		conn_release(c, trusted);
	return own;
}

/* --- requests --- */

static __always_inline struct tcp_ctl *tcp_ctl_now(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tcp_ctl, &zero);
}

static __always_inline bool wanted(__u64 latency, __u32 side)
{
	struct tcp_ctl *ctl = tcp_ctl_now();
	__u64 *n;

	if (!ctl)
		return true;
	switch (ctl->requests) {
	case TCP_REQUESTS_NONE:
		return false;
	case TCP_REQUESTS_SLOW:
		return latency >= ctl->slow_ns;
	case TCP_REQUESTS_SAMPLE:
		n = bpf_map_lookup_elem(&sample_count, &side);
		if (!n || ctl->sample <= 1)
			return true;
		return __sync_fetch_and_add(n, 1) % ctl->sample == 0;
	}
	return true;
}

static __always_inline void edge_of(const struct tcp_conn *c,
				    struct tcp_edge *e)
{
	if (c->role != TCP_ROLE_CLIENT) {
		tcp_server_edge(e, c->svc, c->pid,
				c->src_known ? &c->src : NULL, c->src_external,
				&c->t);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->side = TCP_SIDE_CLIENT;
	e->src_svc = c->svc;
	e->src_pid = c->svc ? 0 : c->pid;
	__builtin_memcpy(e->dst_addr, c->t.raddr, 16);
	e->dst_family = c->t.family;
}

/* The edge's value, made if need be; NULL with *err the update's error
 * when it could not be made. */
static __always_inline struct tcp_edge_val *edge_val(const struct tcp_edge *e,
						     long *err)
{
	struct tcp_edge_val *v = bpf_map_lookup_elem(&edges, e), *zero;
	__u32 key = 0;

	*err = 0;
	if (v)
		return v;
	/* The edge value is too large for the stack: a zeroed one is kept in
	 * a map. */
	zero = bpf_map_lookup_elem(&edge_zero, &key);
	return zero ? lookup_or_try_init_err(&edges, e, zero, err) : NULL;
}

/* The addresses account_edge keeps in an edge's value (and hands to
 * user space with a request it could not count): the server's, and
 * client side the client's. */
static __always_inline void edge_addresses(const struct tcp_conn *c,
					   __u8 *dst_addr, __u16 *dst_family,
					   __u8 *src_addr, __u16 *src_family)
{
	__builtin_memcpy(dst_addr,
			 c->role == TCP_ROLE_CLIENT ? c->t.raddr : c->t.laddr,
			 16);
	*dst_family = c->t.family;
	if (c->role == TCP_ROLE_CLIENT) {
		__builtin_memcpy(src_addr, c->t.laddr, 16);
		*src_family = c->t.family;
	}
}

/* A request whose edge could not be made, the map not full, goes to user
 * space (struct tcp_edge_miss); lost only when the ring is full too. No
 * wakeup: it is needed by the next report, which drains the ring
 * first. */
static __always_inline void edge_missed(const struct tcp_conn *c,
					const struct tcp_edge *e, __u64 latency,
					const struct outcome *o)
{
	struct tcp_edge_miss *m;

	m = bpf_ringbuf_reserve(&tcp_events, sizeof(*m), 0);
	if (!m) {
		stat_inc(&tcp_stats, TCP_EDGES_FULL);
		return;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->e = *e;
	m->latency_ns = latency;
	m->req_bytes = c->req_bytes;
	m->resp_bytes = c->resp_bytes;
	edge_addresses(c, m->dst_addr, &m->dst_family, m->src_addr,
		       &m->src_family);
	m->proto_slot = proto_slot(c) & (TCP_PROTO_SLOTS - 1);
	m->outcome_known = o->known;
	m->outcome_error = o->error;
	m->status_class = o->status_class;
	bpf_ringbuf_submit(m, BPF_RB_NO_WAKEUP);
}

/* A finished request counts on its edge: a global function, verified
 * once on its own (inlined, each way finish takes to it walked it again:
 * 96,000 instructions in each program that finishes requests). */
__noinline int account_edge(const struct tcp_conn *c, __u64 latency,
			    const struct outcome *o)
{
	struct tcp_edge e;
	struct tcp_edge_val *v;
	__u32 b = hist_bucket(latency), class;
	long err;

	if (!c || !o)
		return 0;
	edge_of(c, &e);
	v = edge_val(&e, &err);
	if (!v && err == -E2BIG) { /* full: one more would not fit either */
		stat_inc(&tcp_stats, TCP_EDGES_FULL);
		return 0;
	}
	if (!v) {
		edge_missed(c, &e, latency, o);
		return 0;
	}
	/* Per CPU, yet atomic: a request finished in softirq (a close) can
	 * interrupt one finished in a process (or the quiet sweep) on the
	 * same CPU between a plain add's load and store, and one of the
	 * two would be lost (node-a's topology once had 26 of 27). A lock
	 * add on a line no other CPU writes costs a few ns. */
	__sync_fetch_and_add(&v->requests, 1);
	__sync_fetch_and_add(&v->req_bytes, c->req_bytes);
	__sync_fetch_and_add(&v->resp_bytes, c->resp_bytes);
	edge_addresses(c, v->dst_addr, &v->dst_family, v->src_addr,
		       &v->src_family);
	if (b < HIST_BUCKETS)
		__sync_fetch_and_add(&v->buckets[b], 1);
	__sync_fetch_and_add(
		&v->proto_requests[proto_slot(c) & (TCP_PROTO_SLOTS - 1)], 1);
	if (!o->known)
		return 0;
	count_outcome(&v->outcomes, &v->errors, o);
	class = o->status_class - 1;
	/* checked on the register it indexes with (the compiler would check
	 * a copy) */
	asm volatile("%[c] &= 7" : [c] "+r"(class));
	if (class < 5)
		__sync_fetch_and_add(&v->status_class[class], 1);
	return 0;
}

/* A verdict came after some of the connection's requests were counted
 * undecided: they move to its protocol (per CPU: this CPU's undecided
 * count may wrap below zero, the sum over CPUs is right; atomic, as in
 * account_edge). */
static __always_inline void edge_reattribute(const struct tcp_conn *c)
{
	struct tcp_edge e;
	struct tcp_edge_val *v;

	if (!c->requests)
		return;
	edge_of(c, &e);
	v = bpf_map_lookup_elem(&edges, &e);
	if (!v)
		return;
	__sync_fetch_and_sub(&v->proto_requests[TCP_PROTO_UNDECIDED],
			     c->requests);
	__sync_fetch_and_add(
		&v->proto_requests[c->proto & (TCP_PROTO_SLOTS - 1)],
		c->requests);
}

/* A wakeup is an interrupt raised on this CPU (8 us in a VM here): past
 * the mark, every record until user space has drained below it asked for
 * one (~2% of them under a stream of short connections). Once per
 * millisecond is enough: the ring has room for 1 MiB more. */
#define TCP_WAKEUP_EVERY_NS 1000000
__u64 woken_ns; /* when the last wakeup was asked for */

static __always_inline __u64 wakeup_flags(void)
{
	__u64 now;

	if (bpf_ringbuf_query(&tcp_events, BPF_RB_AVAIL_DATA) <
	    TCP_WAKEUP_BYTES)
		return BPF_RB_NO_WAKEUP;
	now = bpf_ktime_get_ns();
	if (now - woken_ns < TCP_WAKEUP_EVERY_NS)
		return BPF_RB_NO_WAKEUP;
	woken_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline void fill_event(struct tcp_event *ev,
				       const struct tcp_conn *c, __u64 latency)
{
	ev->t = c->t;
	ev->end_ns = c->last_send_ns;
	ev->latency_ns = latency;
	ev->req_bytes = c->req_bytes;
	ev->resp_bytes = c->resp_bytes;
	ev->req_off = c->req_off;
	ev->resp_off = c->resp_off;
	ev->pid = c->pid;
	ev->tid = c->tid;
	ev->svc = c->svc;
	ev->proto = c->tls_pre ? TCP_PROTO_UNDECIDED : proto_slot(c);
	ev->src = c->src;
	ev->side = c->role == TCP_ROLE_CLIENT ? TCP_SIDE_CLIENT :
						TCP_SIDE_SERVER;
	ev->req_seq = c->req_seq;
	ev->resp_seq = c->resp_seq;
	ev->dst_known = c->dst_known;
	ev->dst = c->dst;
	ev->cookie = c->tls_pre ? c->proto_cookie & ~PROTO_TLS_COOKIE :
				  c->proto_cookie;
	ev->id = c->id;
	ev->parent = c->parent;
	ev->link = c->link;
	ev->grpc = c->grpc;
	ev->req_head = c->req_head;
	ev->resp_head = c->resp_head;
	ev->size_pad = 0;
}

static __always_inline void send_event(const struct tcp_conn *c, __u64 latency)
{
	struct tcp_event *ev;

	if (batch_event(c, latency))
		return;
	ev = bpf_ringbuf_reserve(&tcp_events, sizeof(*ev), 0);
	if (!ev) {
		stat_inc(&tcp_stats, TCP_RB_LOST);
		return;
	}
	fill_event(ev, c, latency);
	bpf_ringbuf_submit(ev, wakeup_flags());
}

/* The server's owner, when it is a process on this host kmond
 * monitors: its end wrote it when it read the request, before it could
 * answer, so it is there by the first response. */
static __always_inline void find_dst(struct tcp_conn *c)
{
	struct tcp_tuple t = c->t; /* on the stack, as proto_resolve's key */
	struct tcp_peer *p;

	c->dst_checked = 1;
	p = bpf_map_lookup_elem(&server_of, &t);
	if (!p)
		return;
	c->dst = *p;
	c->dst_known = 1;
}

/* What a finished request counts on its edge and its load: its outcome
 * when its protocol is decided (and it is not gRPC's); else, when it has
 * a response head, user space decides it once it has the verdict (and
 * reads the grpc-status). */
static __always_inline void finish_outcome(const struct tcp_conn *c,
					   struct outcome *o)
{
	__u32 proto = proto_slot(c);
	struct tcp_edge e;

	__builtin_memset(o, 0, sizeof(*o));
	if (!c->resp_head.len || !KMON_READ_ONCE(outcomes_on))
		return;
	if (proto < PROTO_NR && !c->grpc) {
		outcome_of(c, proto, o);
		if (o->known)
			outcome_load(c, o);
		return;
	}
	edge_of(c, &e);
	outcome_late(c, &e, !c->dst_known, proto);
}

/* The request on c is over: counted, sent, the connection idle. A global
 * function, verified once in each program: inlined, it was walked again
 * for each way to each of its callers (the read hook took 771,016
 * instructions, most of the verifier's limit; 111,459 now, and every
 * start of kmond about 3 s faster here). */
__noinline int finish(struct tcp_conn *c)
{
	__u32 side = TCP_SIDE_SERVER;
	struct outcome o;
	__u64 latency;

	if (!c)
		return 0;
	latency = c->last_send_ns - c->start_ns;
	tls_take_heads(c); /* a TLS read's plaintext heads */
	heads_late(c);
	proto_resolve(c); /* before this request counts */
	grpc_mark(c);
	c->phase = TCP_IDLE;
	c->requests++;
	stat_inc(&tcp_stats, TCP_REQUESTS_SEEN);
	if (c->role == TCP_ROLE_CLIENT) {
		side = TCP_SIDE_CLIENT;
		if (!c->dst_checked)
			find_dst(c);
	}
	/* A call between two monitored processes of this host is one edge,
	 * counted by its server end. */
	finish_outcome(c, &o);
	if (!c->dst_known)
		account_edge(c, latency, &o);
	if (wanted(latency, side))
		send_event(c, latency);
	c->tls_pre = 0;
	return 0;
}

/* Tells the client end (other: its tuple) who answers it. */
static __always_inline void tell_client(const struct tcp_conn *c,
					const struct tcp_tuple *other)
{
	struct tcp_peer me = { .pid = c->pid, .svc = c->svc };

	bpf_map_update_elem(&server_of, other, &me, BPF_ANY);
}

/* The client's owner, when it is a process on this host kmond saw
 * connect or send. The client writes before the server can read, so
 * its entry is there by the first request: one look per connection. */
/* Whether a client kmond cannot name keeps an edge of its own: on this
 * host (loopback), or at a known node's address. The others (an internet-
 * facing server's many clients) share the server's "external" edge, or
 * they would exhaust the edges. */
static __always_inline bool own_edge(const struct tcp_tuple *t)
{
	struct tcp_node_key k = {
		.prefixlen = 8 + (t->family == AF_INET ? 32 : 128)
	};

	if (t->family == AF_INET && t->raddr[0] == 127)
		return true;
	if (t->family == AF_INET6) {
		__u64 hi, lo;

		__builtin_memcpy(&hi, t->raddr, 8);
		__builtin_memcpy(&lo, t->raddr + 8, 8);
		if (hi == 0 && lo == bpf_cpu_to_be64(1))
			return true;
	}
	k.data[0] = t->family;
	__builtin_memcpy(&k.data[1], t->raddr, 16);
	return bpf_map_lookup_elem(&known_nodes, &k) != NULL;
}

static __always_inline void find_src(struct tcp_conn *c)
{
	struct tcp_tuple other;
	struct tcp_peer *p;

	c->src_checked = 1;
	swap_tuple(&c->t, &other);
	p = bpf_map_lookup_elem(&peers, &other);
	if (!p) {
		c->src_external = !own_edge(&c->t);
		return;
	}
	c->src = *p;
	c->src_known = 1;
	tell_client(c, &other);
}

/* A reload since the connection's service was taken may have removed
 * that service or moved the process to another: looked at again once per
 * request, and only after a reload. A process no longer monitored has its
 * connection dropped (not measured until it closes). */
static __always_inline bool still_monitored(struct tcp_conn *c)
{
	__u32 gen = config_gen(), svc;

	if (c->gen == gen)
		return true;
	c->gen = gen;
	if (!kmon_selected_tgid(c->pid, &svc)) {
		c->role = TCP_ROLE_DROPPED;
		return false;
	}
	c->svc = svc;
	return true;
}

/* A request (call) began at c->start_ns: its load and its path, as
 * collectors.tcp.load and .paths say, read at each start so a reload
 * applies at once (a request begun with load off ends outside it too). */
static __always_inline void account_start(struct tcp_conn *c, bool call)
{
	struct tcp_ctl *ctl = tcp_ctl_now();

	if (ctl && ctl->no_load)
		load_none(c);
	else
		load_start(c, c->start_ns);
	if (ctl && ctl->no_paths)
		link_none(c);
	else if (call)
		link_call(c);
	else
		link_request(c);
}

static __always_inline void begin_request(struct tcp_conn *c, __u64 now)
{
	/* The request before may still be open in the load: its response's
	 * send (a writer thread's, while a reader thread reads this request)
	 * has not returned to its hook on another CPU. It ends here, before
	 * its start is overwritten, or its count would stay: on a tandem of
	 * such threads the lower tier read busy 1.0 for 0.68. */
	if (KMON_READ_ONCE(c->load_open) == TCP_LOAD_IS_OPEN)
		load_end(c, now, true);
	c->phase = TCP_REQUEST;
	c->start_ns = now;
	c->tid = (__u32)bpf_get_current_pid_tgid();
	c->req_bytes = 0;
	c->resp_bytes = 0;
}

/* A server's request begins at now, its first byte at offset off of the
 * bytes read and at sequence number seq. */
static __always_inline void server_request_begins(struct tcp_conn *c, __u64 now,
						  __u64 off, __u32 seq)
{
	begin_request(c, now);
	account_start(c, false);
	c->req_off = off;
	c->req_seq = seq;
	head_request(c, seq);
	if (!c->src_checked)
		find_src(c);
}

static __always_inline void on_request_bytes(struct tcp_conn *c,
					     const struct sock *sk, int len,
					     bool trusted)
{
	__u32 seq;
	__u64 ctl;

	if (c->phase == TCP_RESPONSE)
		finish(c);
	if (c->phase == TCP_IDLE && !still_monitored(c))
		return;
	if (c->phase == TCP_IDLE) {
		seq = received_seq(sk, len, trusted);
		/* HTTP/2: past the control frames it starts with */
		ctl = h2_message_begins(c, &seq);
		server_request_begins(c, bpf_ktime_get_ns(), c->rx_off, seq);
		c->req_bytes = ctl;
	}
	c->req_bytes += len;
	c->rx_off += len;
}

static __always_inline void on_response_bytes(struct tcp_conn *c,
					      const struct sock *sk, int len,
					      bool trusted)
{
	/* Bytes before any request (a greeting) answer nothing. */
	if (c->phase == TCP_REQUEST) {
		c->phase = TCP_RESPONSE;
		/* A connection older than kmond: its client end's state is
		 * made by the client's first send hook, which may run after
		 * this end read the request (a send still blocked on a full
		 * buffer, a sender preempted on PREEMPT_RT). Once more, before
		 * the client can ask who answered it. */
		if (c->src_late) {
			c->src_late = 0;
			if (!c->src_known)
				find_src(c);
		}
		c->resp_off = c->tx_off;
		c->resp_seq = sent_seq(sk, len, trusted);
		head_response(c, c->resp_seq);
		link_answered(c);
	}
	if (c->phase == TCP_RESPONSE) {
		c->resp_bytes += len;
		/* From the send's entry when the hook saw it: the response
		 * is out before the send returns, and a client woken by it
		 * may read it first (PREEMPT_RT). Not a stamp from before
		 * the request (a send of another thread, cut short). */
		c->last_send_ns = c->call_ns >= c->start_ns ?
					  c->call_ns :
					  bpf_ktime_get_ns();
		load_sent(c, c->last_send_ns);
	}
	c->call_ns = 0;
	c->tx_off += len;
}

/* A read held by tls_hold_read (bpf/tcp/tls.bpf.h), at the connection's
 * next hook: its SSL_read has returned. When its plaintext held only
 * HTTP/2 control frames, or there was none (tls_held_empty), the return
 * left the message it would have begun open, at its first byte: nothing
 * began, the response goes on.
 * Else a request began at that read, as at any turn, with that read's
 * start, offset and sequence number; the plaintext read since is its. A
 * global function, verified once. Returns 1 when a reload dropped the
 * connection's process (the hook goes no further, as conn_of's would
 * not have), else 0. */
__noinline int tls_settle(struct tcp_conn *c)
{
	struct tls_heads *h;
	__u64 in = 0;

	if (!c || !c->tls_held)
		return 0;
	c->tls_held = 0;
	h = tls_heads_of(c);
	if (h && h->open && h->open_is_req && h->open_seq == c->held_seq)
		return 0;
	if (h)
		in = __sync_lock_test_and_set(&h->bytes[PROTO_DIR_IN], 0);
	if (c->phase == TCP_RESPONSE)
		finish(c);
	if (c->phase != TCP_IDLE)
		return 0;
	if (!still_monitored(c))
		return 1;
	server_request_begins(c, c->held_ns, c->held_off, c->held_seq);
	c->req_bytes = in;
	return 0;
}

/* --- the client side --- */

/* Whether the owner's calls are followed: collectors.tcp.client and the
 * service's client key, read at each call so a reload applies at once. */
static __always_inline bool client_on(const struct tcp_conn *c)
{
	struct tcp_ctl *ctl = tcp_ctl_now();
	__u32 svc = c->svc;

	if (!ctl)
		return true;
	if (ctl->no_client)
		return false;
	return !ctl->some_no_client || !bpf_map_lookup_elem(&client_off, &svc);
}

/* The client sends: a call starts with its first bytes after the
 * previous response, which that ends. */
static __always_inline void
on_call_bytes(struct tcp_conn *c, const struct sock *sk, int len, bool trusted)
{
	if (c->phase == TCP_RESPONSE)
		finish(c);
	if (c->phase == TCP_IDLE) {
		/* As a server's next request: a reload may have removed or
		 * moved the owner's service. A dropped client names no one. */
		if (!still_monitored(c)) {
			bpf_map_delete_elem(&peers, &c->t);
			bpf_map_delete_elem(&server_of, &c->t);
			return;
		}
		if (!client_on(c))
			goto out;
		/* From the send's entry when the hook saw it. */
		begin_request(c, c->call_ns ?: bpf_ktime_get_ns());
		account_start(c, true);
		c->req_off = c->tx_off;
		c->req_seq = sent_seq(sk, len, trusted);
		head_request(c, c->req_seq);
	}
	c->req_bytes += len;
out:
	c->call_ns = 0;
	c->tx_off += len;
}

/* A send begins on a socket we follow (tcp_sendmsg_locked: one load, or
 * one lookup of the hash, for a socket nobody follows; else the send
 * syscall's entry, with the hash). tcp_sendmsg_locked fires per chunk
 * queued: the first one stamps the send, whose return takes the stamp: a
 * client's call starts there, a server's response is out from there. */
static __always_inline void stamp_send(struct tcp_conn *c)
{
	if (c && !c->call_ns)
		c->call_ns = bpf_ktime_get_ns();
}

/* Where tcp_sendmsg_locked is missing but the state is in the sockets
 * (6.3 to 6.12): the send syscall's entry cannot reach a socket's storage
 * (its socket is a plain address there), so it leaves its time here, per
 * thread, with that address; the send's return, on the same thread,
 * takes it as the send's stamp. An LRU: preallocated, and a thread that
 * never sends on a followed socket again leaves only a slot behind. */
struct send_entry {
	__u64 sk;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* thread id */
	__type(value, struct send_entry);
} send_entries SEC(".maps");

const volatile bool sends_stashed;

static __always_inline void stash_send(const struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct send_entry e = { (__u64)sk, bpf_ktime_get_ns() };

	bpf_map_update_elem(&send_entries, &tid, &e, BPF_ANY);
}

/* The send that returns on sk now: its entry's time, if this thread left
 * one for sk (else it is stamped as it returns). */
static __always_inline void take_stashed_send(struct tcp_conn *c,
					      const struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct send_entry *e = bpf_map_lookup_elem(&send_entries, &tid);

	if (!e || e->sk != (__u64)sk)
		return;
	if (!c->call_ns)
		c->call_ns = e->ns;
	bpf_map_delete_elem(&send_entries, &tid);
}

/* What the tcp_sendmsg_locked program does, set before load: stamp the
 * sends of the sockets we follow (collectors.tcp.client on at start),
 * capture the protocol samples of sends (protocol identification where
 * the hook is a BTF tracepoint). One program does both: one run and one
 * socket lookup per TCP send of the host, not two. */
const volatile bool stamp_sends;
const volatile bool capture_sends;
/* Set by user space when the capture's cgroup programs could not be
 * attached: the sends' samples would have no one to read them. */
bool sends_uncaptured;

static __always_inline int handle_send_entry(struct sock *sk,
					     const struct msghdr *msg)
{
	struct tls_call *call;
	struct tcp_conn *c;

	bool heads = capture_sends && KMON_READ_ONCE(outcomes_on);

	/* no send to stamp, none to capture, no HTTP/2 control frames to
	 * walk: no socket to look up */
	if (!(stamp_sends && KMON_READ_ONCE(followed)) &&
	    !(capture_sends && KMON_READ_ONCE(capturing)) && !heads &&
	    !(capture_sends && KMON_READ_ONCE(h2_plain)))
		return 0;
	c = conn_find(sk, true);
	if (!c)
		return 0;
	if (stamp_sends)
		stamp_send(c);
	if (sends_uncaptured)
		return 0;
	call = capture_sends ? tls_call_now(sk, true) : NULL;
	if (call) {
		if (call->kind == TLS_CALL_HANDSHAKE)
			c->tls_hs = 1;
		else
			tls_send_entry(sk, msg, c, call);
	}
	/* its ciphertext: no head, no sample of it */
	if (c->tls)
		return 0;
	/* with outcomes off, for HTTP/2's control frames alone */
	if (heads || (capture_sends && h2_possible(c)))
		send_head(sk, msg, c);
	if (capture_sends && c->proto_state == PROTO_CAPTURING)
		capture_send(sk, msg, c);
	return 0;
}

/* The client receives: the response runs to the last bytes before its
 * next call or the close. */
static __always_inline void
on_reply_bytes(struct tcp_conn *c, const struct sock *sk, int len, bool trusted)
{
	/* Bytes before any call (a server's greeting) answer nothing. */
	if (c->phase == TCP_REQUEST) {
		c->phase = TCP_RESPONSE;
		c->resp_off = c->rx_off;
		c->resp_seq = received_seq(sk, len, trusted);
		c->resp_bytes = h2_message_begins(c, &c->resp_seq);
		head_response(c, c->resp_seq);
		/* Its caller's handler may run again: not yet if this read
		 * took a head alone, its body to come (body_after.bpf.h),
		 * but at the next read. */
		if (c->resp_head.body_after != len)
			unit_release(c);
	} else if (c->phase == TCP_RESPONSE && c->unit_id) {
		unit_release(c);
	}
	if (c->phase == TCP_RESPONSE) {
		c->resp_bytes += len;
		c->last_send_ns = bpf_ktime_get_ns();
		load_sent(c, c->last_send_ns);
	}
	c->rx_off += len;
}

static __always_inline void
recv_bytes(struct tcp_conn *c, const struct sock *sk, int ret, bool trusted)
{
	if (!tls_feeds(c, sk, tls_call_now(sk, trusted), trusted) ||
	    (c->h2 && !c->tls &&
	     h2_control_only(c, PROTO_DIR_IN, received_seq(sk, ret, trusted),
			     ret))) {
		c->rx_off += ret;
		return;
	}
	if (trusted && c->tls) {
		/* another read settles the one held first (unless a
		 * reload dropped the connection meanwhile) */
		if (c->tls_held && !tls_in_held_call(c, sk) && tls_settle(c)) {
			c->rx_off += ret;
			return;
		}
		if (tls_hold_read(c, sk, ret))
			return;
	}
	if (c->role == TCP_ROLE_SERVER)
		on_request_bytes(c, sk, ret, trusted);
	else
		on_reply_bytes(c, sk, ret, trusted);
	/* looked up again: a pointer kept across the request model would
	 * double the paths the verifier walks */
	if (trusted && c->tls) {
		tls_uncount(c, PROTO_DIR_IN, ret);
		tls_read_seen(c, tls_call_now(sk, trusted), ret, sk);
	}
}

/* Server connection c's thread read ret bytes of its request: its last
 * step. A read of the head alone, its body promised, begins a wait for
 * that body, which the next read ends, and is no step: the rule cannot
 * tell whose call follows it, an older request's (asyncio runs its
 * handlers late) or this one's (Node starts a handler on the head), and
 * counted this request's own wait as another's. Such calls stay
 * unlinked. */
static __always_inline void step_request_read(struct tcp_conn *c, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (c->req_bytes != (__u64)ret) {
		body_wait_end(c);
	} else if (c->req_head.body_after == ret) {
		body_wait_begin(c, tid);
		step_other();
		return;
	}
	step_read(tid, c->id);
}

static __always_inline int handle_recv(const struct sock *sk, int ret,
				       int flags, bool trusted)
{
	struct tcp_conn *c;

	/* A peek is read again; the error queue holds no stream data. */
	if (ret <= 0 || (flags & (MSG_PEEK | MSG_ERRQUEUE)) || !sk)
		return 0;
	c = conn_of(sk, trusted);
	if (!c)
		return 0;
	recv_bytes(c, sk, ret, trusted);
	/* The thread's last step: reading this request (its first bytes or
	 * more: a body the handler waits for; not a head alone that awaits
	 * its body), or another step. Counted in its thread only with paths
	 * on. */
	if (c->role == TCP_ROLE_SERVER && c->phase == TCP_REQUEST &&
	    c->holds_thread)
		step_request_read(c, ret);
	else
		step_other();
	conn_release(c, trusted);
	return 0;
}

/* The answer to a request whose socket closed during the send. */
static __always_inline void answer_after_close(const struct sock *sk, int ret,
					       bool trusted)
{
	__u64 skp = (__u64)sk;
	struct tcp_conn *c;

	/* Any other socket nobody monitors (a client's, say): spare it the
	 * lookup, as such sends are as many as the monitored ones. */
	if ((trusted ? sk->__sk_common.skc_state :
		       BPF_CORE_READ(sk, __sk_common.skc_state)) != TCP_CLOSE)
		return;
	c = bpf_map_lookup_elem(&closing, &skp);
	/* Its owner, not another socket made at the same address since. */
	if (!c || c->pid != bpf_get_current_pid_tgid() >> 32)
		return;
	/* Its load goes on from this request's end as unanswered (by the
	 * close, or by its start once it found the close's mark). Any other
	 * load state is not to be extended: this request's own OPEN (its
	 * start found the mark, and ends it), or an earlier request's (this
	 * one's start, on another CPU, had not written its own yet). */
	if (c->load_state != TCP_LOAD_CLOSED || c->load_end_ns < c->start_ns)
		c->load_state = TCP_LOAD_NONE;
	/* The close and the reader release the thread from the live state
	 * between them; a copy made as the reader took it holds it too. */
	c->holds_thread = 0;
	/* read in plaintext, it answers inside SSL_write: a send outside
	 * one is the close_notify of SSL_shutdown, no answer */
	if (c->tls && !tls_feeds(c, sk, tls_call_now(sk, trusted), trusted)) {
		bpf_map_delete_elem(&closing, &skp);
		return;
	}
	on_response_bytes(c, sk, ret, trusted);
	finish(c);
	bpf_map_delete_elem(&closing, &skp);
}

static __always_inline void
send_bytes(struct tcp_conn *c, const struct sock *sk, int ret, bool trusted)
{
	if (sends_stashed)
		take_stashed_send(c, sk);
	if (trusted && c->tls_held && tls_settle(c)) {
		c->tx_off += ret;
		return;
	}
	/* HTTP/2's control frames are no request's or response's (seen at
	 * the send's entry, or where none is hooked by the egress program) */
	if (!tls_feeds(c, sk, tls_call_now(sk, trusted), trusted) ||
	    c->ctl_send ||
	    (c->h2 && !c->tls &&
	     h2_control_only(c, PROTO_DIR_OUT, sent_seq(sk, ret, trusted),
			     ret))) {
		c->ctl_send = 0;
		c->call_ns = 0; /* no call's start, no response's end */
		c->tx_off += ret;
		return;
	}
	if (c->role == TCP_ROLE_SERVER)
		on_response_bytes(c, sk, ret, trusted);
	else
		on_call_bytes(c, sk, ret, trusted);
	if (trusted && c->tls)
		tls_uncount(c, PROTO_DIR_OUT, ret);
}

static __always_inline int handle_send(const struct sock *sk, int ret,
				       bool trusted)
{
	struct tcp_conn *c;

	if (ret <= 0 || !sk)
		return 0;
	c = conn_of(sk, trusted);
	if (!c) {
		answer_after_close(sk, ret, trusted);
		return 0;
	}
	send_bytes(c, sk, ret, trusted);
	step_other();
	conn_release(c, trusted);
	return 0;
}

/* --- connection life --- */

static __always_inline void on_close(const struct sock *sk, bool trusted)
{
	__u64 skp = (__u64)sk;
	__u32 zero = 0;
	__u64 *depth = bpf_map_lookup_elem(&conn_build_depth, &zero);
	struct tcp_conn *c;

	/* The kernel set sk_err before this close (a reset): looked up only
	 * after a full barrier, so that a state made on another CPU that
	 * missed sk_err is found here (see sk_order). */
	if (depth)
		sk_order(depth, 0);
	c = conn_find(sk, trusted);
	if (!c)
		return;
	if (trusted && c->tls_held)
		tls_settle(c);
	/* before closing gets a copy: the copy is in no count */
	proto_uncount(c);
	load_closed(c);
	if (c->role == TCP_ROLE_SERVER && c->phase == TCP_RESPONSE)
		finish(c);
	else if (c->role == TCP_ROLE_SERVER && c->phase == TCP_REQUEST) {
		link_answered(c); /* its thread is done with it */
		bpf_map_update_elem(&closing, &skp, c, BPF_ANY);
	}
	if (c->role == TCP_ROLE_CLIENT) {
		unit_release(c);
		/* A response cut short by the close still ends its call. */
		if (c->phase == TCP_RESPONSE)
			finish(c);
		bpf_map_delete_elem(&peers, &c->t);
		/* Its server may have told it even if it never asked. */
		bpf_map_delete_elem(&server_of, &c->t);
	}
	proto_closed(c);
	if (c->tls)
		tls_forget(c);
	conn_forget(sk, c, trusted);
}

static __always_inline void on_connect(const struct sock *sk, bool trusted)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, svc;

	struct tcp_ctl *ctl;
	struct tcp_conn *c;

	/* connect(), in the caller's context; the local port comes later. */
	if (!kmon_selected_tgid(tgid, &svc))
		return;
	c = new_conn(sk, trusted, TCP_ROLE_CLIENT, tgid, svc);
	if (!c)
		return;
	ctl = tcp_ctl_now();
	if (!ctl || !ctl->no_paths)
		link_connect(c);
}

static __always_inline void on_connected(const struct sock *sk, bool trusted)
{
	struct tcp_conn *c = conn_find(sk, trusted);

	if (!c || c->role != TCP_ROLE_CLIENT)
		return;
	read_tuple(sk, &c->t, trusted);
	remember_client(c);
}

/* The server closed a connection (its FIN came): a call waiting on it
 * fails, and its caller's handler may run again. */
static __always_inline void on_peer_closed(const struct sock *sk, bool trusted)
{
	struct tcp_conn *c = conn_find(sk, trusted);

	if (c && c->role == TCP_ROLE_CLIENT && c->unit_id)
		unit_release(c);
}

static __always_inline int handle_state(const struct sock *sk, int oldstate,
					int newstate, bool trusted)
{
	struct tcp_listen_key lk;
	__u32 on = TCP_LISTEN_ON;

	/* Half of a connection's steps are none of these (FIN_WAIT1,
	 * LAST_ACK, ...): they end before the socket is read. */
	if (newstate != TCP_SYN_SENT && newstate != TCP_ESTABLISHED &&
	    newstate != TCP_LISTEN && newstate != TCP_CLOSE &&
	    newstate != TCP_CLOSE_WAIT)
		return 0;
	if (!sk || SK_FIELD(trusted, sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (newstate == TCP_CLOSE_WAIT) {
		on_peer_closed(sk, trusted);
	} else if (newstate == TCP_SYN_SENT) {
		on_connect(sk, trusted);
	} else if (newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_SENT) {
		on_connected(sk, trusted);
	} else if (newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_RECV) {
		/* Softirq: the owner is known at its first read. */
		if (!listener_unmonitored(sk, trusted))
			new_conn(sk, trusted, TCP_ROLE_UNKNOWN, 0, 0);
	} else if (newstate == TCP_LISTEN) {
		listen_key(sk, &lk, trusted);
		bpf_map_update_elem(&listen_ports, &lk, &on, BPF_ANY);
		__sync_fetch_and_add(&listen_changes, 1);
	} else if (newstate == TCP_CLOSE) {
		if (oldstate == TCP_LISTEN) {
			listen_key(sk, &lk, trusted);
			bpf_map_delete_elem(&listen_ports, &lk);
			__sync_fetch_and_add(&listen_changes, 1);
		}
		on_close(sk, trusted);
	}
	return 0;
}

/* --- the syscall fallback (kernels before 6.3: no sock_*_length) --- */

/* The syscalls that move stream bytes through a socket fd, and where
 * their recv flags are. */
#if defined(__TARGET_ARCH_arm64)
#define NR_READ 63
#define NR_WRITE 64
#define NR_READV 65
#define NR_WRITEV 66
#define NR_SENDFILE 71
#define NR_SENDTO 206
#define NR_RECVFROM 207
#define NR_SENDMSG 211
#define NR_RECVMSG 212
#define syscall_nr(regs) BPF_CORE_READ((regs), syscallno)
#else
#define NR_READ 0
#define NR_WRITE 1
#define NR_READV 19
#define NR_WRITEV 20
#define NR_SENDFILE 40
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define syscall_nr(regs) BPF_CORE_READ((regs), orig_ax)
#endif
#define S_IFMT 00170000
#define S_IFSOCK 0140000

/* The struct sock behind fd of the current task, NULL if not a socket. */
static __always_inline struct sock *sock_of_fd(unsigned long fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct socket *sock;
	struct file *f;

	if (fd >= max || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(f, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

static __always_inline int handle_sys_exit(struct pt_regs *regs, long ret,
					   bool recv)
{
	unsigned long nr, fd, flags = 0;

	if (ret <= 0)
		return 0;
	nr = syscall_nr(regs);
	if (recv) {
		if (nr == NR_RECVFROM)
			flags = PT_REGS_PARM4_CORE_SYSCALL(regs);
		else if (nr == NR_RECVMSG)
			flags = PT_REGS_PARM3_CORE_SYSCALL(regs);
		else if (nr != NR_READ && nr != NR_READV)
			return 0;
	} else if (nr != NR_WRITE && nr != NR_WRITEV && nr != NR_SENDTO &&
		   nr != NR_SENDMSG && nr != NR_SENDFILE) {
		return 0;
	}
	fd = PT_REGS_PARM1_CORE_SYSCALL(regs); /* sendfile: out_fd */
	if (recv)
		return handle_recv(sock_of_fd(fd), ret, flags, false);
	return handle_send(sock_of_fd(fd), ret, false);
}

/* Attach candidates, chosen at start-up: tp_btf, then the tracepoint,
 * then every syscall's exit (reading the socket behind its fd). */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(tcp_recv_btf, struct sock *sk, int ret, int flags)
{
	return handle_recv(sk, ret, flags, true);
}

SEC("tracepoint/sock/sock_recv_length")
int tcp_recv_tp(struct trace_event_raw_sock_msg_length___6_3 *ctx)
{
	return handle_recv(ctx->sk, ctx->ret, ctx->flags, false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(tcp_recv_sys, struct pt_regs *regs, long ret)
{
	return handle_sys_exit(regs, ret, true);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(tcp_send_btf, struct sock *sk, int ret, int flags)
{
	return handle_send(sk, ret, true);
}

SEC("tracepoint/sock/sock_send_length")
int tcp_send_tp(struct trace_event_raw_sock_msg_length___6_3 *ctx)
{
	return handle_send(ctx->sk, ctx->ret, false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(tcp_send_sys, struct pt_regs *regs, long ret)
{
	return handle_sys_exit(regs, ret, false);
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tcp_send_entry_btf, struct sock *sk, const struct msghdr *msg)
{
	return handle_send_entry(sk, msg);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tcp_fork_btf, struct task_struct *parent,
	     struct task_struct *child)
{
	return handle_fork(parent->pid, child->pid);
}

SEC("tracepoint/sched/sched_process_fork")
int tcp_fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	return handle_fork(ctx->parent_pid, ctx->child_pid);
}

/* The send's entry where tcp_sendmsg_locked is missing: a send syscall
 * on a socket we follow (the hash, before 6.3), or on any socket (the
 * state in the sockets: stashed for the send's return). Stamped at the
 * return, a call would start after the server may have read it (the
 * loopback or a veth delivers within the sender's syscall), and a
 * response would end after its client may have read it: the client
 * would wait less than the server worked. */
SEC("raw_tp/sys_enter")
int BPF_PROG(tcp_send_entry_sys, struct pt_regs *regs, long nr)
{
	struct sock *sk;

	if (nr != NR_WRITE && nr != NR_WRITEV && nr != NR_SENDTO &&
	    nr != NR_SENDMSG && nr != NR_SENDFILE)
		return 0;
	if (!KMON_READ_ONCE(followed))
		return 0;
	sk = sock_of_fd(PT_REGS_PARM1_CORE_SYSCALL(regs));
	if (!sk)
		return 0;
	if (sends_stashed)
		stash_send(sk);
	else
		stamp_send(conn_find(sk, false));
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tcp_state_btf, const struct sock *sk, int oldstate, int newstate)
{
	return handle_state(sk, oldstate, newstate, true);
}

SEC("tracepoint/sock/inet_sock_set_state")
int tcp_state_tp(struct trace_event_raw_inet_sock_set_state *ctx)
{
	return handle_state(ctx->skaddr, ctx->oldstate, ctx->newstate, false);
}

/* --- quiet connections --- */

/* A request is finished by the next one or by the close: a connection
 * kept open and quiet after an answer (a pooled connection after its
 * last request, a client waiting for its user) would hold its last
 * request back, from the records and the topology, and lose it when
 * kmond stops. Before each report and at exit user space walks the
 * states: every request answered before flush_before_ns is finished.
 * (Its connection's next request, arriving on another CPU within the
 * same microsecond, could count it twice: it takes a connection quiet
 * for an interval first.) States in sockets are walked by an iterator;
 * states in the hash by a program user space runs, where a kernel
 * refuses iterators (tcp_flush.h). */
__u64 flush_before_ns;

static __always_inline void flush_quiet(struct tcp_conn *c)
{
	if (c->phase == TCP_RESPONSE && c->last_send_ns < flush_before_ns &&
	    (c->role == TCP_ROLE_SERVER || c->role == TCP_ROLE_CLIENT))
		finish(c);
}

SEC("iter/bpf_sk_storage_map")
int tcp_flush_sockets(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct tcp_conn *c = ctx->value;

	if (c)
		flush_quiet(c);
	return 0;
}

static long flush_conn(void *map, __u64 *skp, struct tcp_conn *c, void *ctx)
{
	flush_quiet(c);
	return 0;
}

SEC("raw_tp")
int tcp_flush_conns(void *ctx)
{
	bpf_for_each_map_elem(&conns, flush_conn, NULL, 0);
	return 0;
}

/* --- TLS in plaintext (tls.bpf.h): attached per process by user space
 * (user/collectors/tcp/tls_attach.c) --- */

/* A write of nothing moves no plaintext: what moves in it is the
 * handshake it runs when none was asked for (openssl s_client's first
 * call), no request's. */
SEC("uprobe")
int BPF_KPROBE(tls_write_entry, void *ssl, const void *buf, int num)
{
	tls_enter(ssl, num > 0 ? TLS_CALL_WRITE : TLS_CALL_HANDSHAKE, buf,
		  num > 0 ? num : 0, NULL);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_write_ex_entry, void *ssl, const void *buf, __u64 num,
	       __u64 *written)
{
	tls_enter(ssl, num ? TLS_CALL_WRITE : TLS_CALL_HANDSHAKE, buf, num,
		  written);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_read_entry, void *ssl, void *buf, int num)
{
	tls_enter(ssl, TLS_CALL_READ, buf, num > 0 ? num : 0, NULL);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_read_ex_entry, void *ssl, void *buf, __u64 num,
	       __u64 *readbytes)
{
	tls_enter(ssl, TLS_CALL_READ, buf, num, readbytes);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(tls_handshake_entry)
{
	tls_enter(NULL, TLS_CALL_HANDSHAKE, NULL, 0, NULL);
	return 0;
}

/* SSL_read, SSL_write and SSL_do_handshake return (SSL_read_ex and
 * SSL_write_ex too: 1 on success, the count behind their pointer). */
SEC("uretprobe")
int BPF_KRETPROBE(tls_exit_ret, long ret)
{
	tls_exit((int)ret); /* an int: the upper half of the register is not */
	return 0;
}
