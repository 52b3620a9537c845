// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* TCP drops from skb:kfree_skb and its drop reason. The drop usually
 * happens in softirq, where the current task is whoever was interrupted,
 * so a drop is attributed to the owner of its socket: connect() and
 * listen() run in the owner's context and are remembered here (from
 * inet_sock_set_state), accepted sockets fall back to the listener's
 * owner by local port. A drop with no socket (NO_SOCKET) has no owner. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "core_fixes.bpf.h"
#include "drop.h"
#include "drop_owners.bpf.h"
#include "filter.bpf.h"
#include "kstack.bpf.h"
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define IP_OFFSET 0x1fff
#define HEADER_UNSET 0xffff

/* Control, rewritten by user space on reload. */
__u32 samples = DROP_DEFAULT_SAMPLES; /* per key per interval */
__u64 window_ns = 1000000000ULL; /* the interval */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DROP_MAX_KEYS);
	__type(key, struct drop_key);
	__type(value, struct drop_agg);
} drop_aggs SEC(".maps");

KSTACK_MAPS(drop_kstacks, drop_scratch, DROP_STACK_ENTRIES);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DROP_RINGBUF_BYTES);
} drop_events SEC(".maps");

KMON_STATS_MAP(drop_stats, DROP_NR_STATS);

/* --- owners --- */

static __always_inline int handle_state(const struct sock *sk, int oldstate,
					int newstate)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 skp = (__u64)sk;
	struct drop_port_key pk;

	switch (newstate) {
	case TCP_SYN_SENT: /* connect(), in the caller's context */
		bpf_map_update_elem(&sock_owner, &skp, &tgid, BPF_ANY);
		break;
	case TCP_LISTEN: /* listen(), likewise */
		bpf_map_update_elem(&sock_owner, &skp, &tgid, BPF_ANY);
		port_key(sk, &pk);
		bpf_map_update_elem(&port_owner, &pk, &tgid, BPF_ANY);
		break;
	case TCP_CLOSE:
		bpf_map_delete_elem(&sock_owner, &skp);
		if (oldstate == TCP_LISTEN) {
			port_key(sk, &pk);
			bpf_map_delete_elem(&port_owner, &pk);
		}
		break;
	}
	return 0;
}

static __always_inline __u32 sock_owner_of(const struct sock *sk)
{
	__u64 skp = (__u64)sk;
	struct drop_port_key pk;
	__u32 *tgid;

	if (!sk)
		return 0;
	tgid = bpf_map_lookup_elem(&sock_owner, &skp);
	if (tgid)
		return *tgid;
	port_key(sk, &pk);
	tgid = bpf_map_lookup_elem(&port_owner, &pk);
	return tgid ? *tgid : 0;
}

/* The owner of the listener on local port (netns, port): a packet the
 * receive path drops before it reaches a socket (a SYN a listener's
 * filter refuses) carries no socket, and kfree_skb names the receiving
 * one (rx_sk) only from 6.11. */
static __always_inline __u32 port_owner_of(__u32 netns, __u16 port)
{
	struct drop_port_key pk = { .netns = netns, .port = port };
	__u32 *tgid = bpf_map_lookup_elem(&port_owner, &pk);

	return tgid ? *tgid : 0;
}

/* --- headers --- */

/* The ports of the TCP header at th (left 0 if it cannot be read). */
static __always_inline void read_ports(const unsigned char *th,
				       struct drop_tuple *t)
{
	struct tcphdr tcp;

	if (bpf_probe_read_kernel(&tcp, sizeof(tcp), th))
		return;
	t->sport = bpf_ntohs(tcp.source);
	t->dport = bpf_ntohs(tcp.dest);
}

/* Fills t from the skb's IPv4 or IPv6 header; false when the packet is
 * not TCP over IP. */
static __always_inline bool parse_tcp(struct sk_buff *skb, struct drop_tuple *t)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u16 th = BPF_CORE_READ(skb, transport_header);
	__u16 proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	__u8 first;

	if (!head || nh == HEADER_UNSET)
		return false;
	if (bpf_probe_read_kernel(&first, 1, head + nh))
		return false;
	/* Locally built packets may be dropped before skb->protocol is set;
	 * the IP version nibble decides then. */
	if (!proto)
		proto = (first >> 4) == 4 ? ETH_P_IP :
			(first >> 4) == 6 ? ETH_P_IPV6 :
					    0;
	if (proto == ETH_P_IP) {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh))
			return false;
		if ((first >> 4) != 4 || ip.protocol != IPPROTO_TCP)
			return false;
		t->family = AF_INET;
		__builtin_memcpy(t->saddr, &ip.saddr, 4);
		__builtin_memcpy(t->daddr, &ip.daddr, 4);
		if (bpf_ntohs(ip.frag_off) & IP_OFFSET)
			return true;
		if (th == HEADER_UNSET || th <= nh)
			th = nh + (first & 0xf) * 4;
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh))
			return false;
		/* Extension headers are not walked: TCP right after the
		 * fixed header, as nearly all TCP is. */
		if ((first >> 4) != 6 || ip6.nexthdr != IPPROTO_TCP)
			return false;
		t->family = AF_INET6;
		__builtin_memcpy(t->saddr, &ip6.saddr, 16);
		__builtin_memcpy(t->daddr, &ip6.daddr, 16);
		if (th == HEADER_UNSET || th <= nh)
			th = nh + sizeof(ip6);
	} else {
		return false;
	}
	read_ports(head + th, t);
	return true;
}

/* The namespace the packet was received (or sent) in: containers' drops
 * stay apart. */
static __always_inline __u32 netns_of(struct sk_buff *skb, struct sock *sk)
{
	struct net_device *dev = BPF_CORE_READ(skb, dev);

	if (dev)
		return BPF_CORE_READ(dev, nd_net.net, ns.inum);
	if (sk)
		return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	return 0;
}

/* --- the drop --- */

/* The current kernel stack, kept in drop_kstacks: its key, 0 (counted)
 * when none. */
static __always_inline __u64 stack_of(void *ctx)
{
	bool full;
	__u64 h = kstack_take(ctx, NULL, &drop_kstacks, &drop_scratch, &full);

	if (!h)
		stat_inc(&drop_stats, DROP_STACK_LOST);
	return h;
}

static __always_inline void summarize(struct drop_agg *agg,
				      const struct drop_tuple *t)
{
	agg->sample = *t;
	__sync_fetch_and_add(&agg->summarized, 1);
}

static __always_inline void send_sample(void *ctx, const struct drop_key *key,
					const struct drop_tuple *t,
					struct drop_agg *agg)
{
	struct drop_event *e;

	e = bpf_ringbuf_reserve(&drop_events, sizeof(*e), 0);
	if (!e) {
		/* Still counted: it goes out in the key's summary. */
		stat_inc(&drop_stats, DROP_RB_LOST);
		summarize(agg, t);
		return;
	}
	e->key = *key;
	e->tuple = *t;
	e->kstack = stack_of(ctx);
	if (e->kstack)
		agg->kstack = e->kstack; /* the summary's sample stack */
	bpf_ringbuf_submit(e, 0);
}

static __always_inline struct drop_agg *agg_of(const struct drop_key *key)
{
	static const struct drop_agg fresh = {};

	return lookup_or_try_init(&drop_aggs, key, &fresh);
}

static __always_inline void account(void *ctx, const struct drop_key *key,
				    const struct drop_tuple *t)
{
	__u64 now = bpf_ktime_get_ns();
	struct drop_agg *agg;

	agg = agg_of(key);
	if (!agg) {
		stat_inc(&drop_stats, DROP_AGG_FULL);
		return;
	}
	stat_inc(&drop_stats, DROP_EVENTS);
	__sync_fetch_and_add(&agg->count, 1);
	/* Racy across CPUs by design: the sample budget is approximate, the
	 * counts are not. */
	if (now - agg->window_start >= window_ns) {
		agg->window_start = now;
		agg->sent = 0;
	}
	if (agg->sent < samples) {
		__sync_fetch_and_add(&agg->sent, 1);
		send_sample(ctx, key, t, agg);
		return;
	}
	/* With no sample yet (samples: 0), the summary still gets a stack:
	 * one walk per key, and again once user space swept it away. */
	if (!agg->kstack || !bpf_map_lookup_elem(&drop_kstacks, &agg->kstack))
		agg->kstack = stack_of(ctx);
	summarize(agg, t);
}

static __always_inline int handle_drop(void *ctx, struct sk_buff *skb,
				       void *location, __u32 reason,
				       struct sock *rx_sk)
{
	struct drop_tuple t = {};
	struct drop_key key = { .reason = reason, .location = (__u64)location };
	struct sock *sk;

	/* NOT_DROPPED_YET, CONSUMED, NOT_SPECIFIED: ordinary frees. */
	if (reason <= skb_drop_reason_not_specified())
		return 0;
	if (!parse_tcp(skb, &t))
		return 0;
	sk = rx_sk ? rx_sk : BPF_CORE_READ(skb, sk);
	key.netns = netns_of(skb, sk);
	key.pid = sk ? sock_owner_of(sk) : port_owner_of(key.netns, t.dport);
	/* No owner: pid 0 is never a selected process, so only the
	 * all-processes mode reports it. */
	if (!kmon_selected_tgid(key.pid, &key.svc))
		return 0;
	account(ctx, &key, &t);
	return 0;
}

/* Attach candidates, chosen at start-up: tp_btf, then the tracepoint. The
 * BTF program reads its arguments by hand so the fourth (rx_sk) is read
 * only on kernels that pass it. */
SEC("tp_btf/kfree_skb")
int drop_kfree_btf(__u64 *ctx)
{
	return handle_drop(ctx, (void *)ctx[0], (void *)ctx[1], ctx[2],
			   kfree_skb_has_rx_sk() ? (void *)ctx[3] : NULL);
}

SEC("tracepoint/skb/kfree_skb")
int drop_kfree_tp(struct trace_event_raw_kfree_skb *ctx)
{
	return handle_drop(ctx, ctx->skbaddr, ctx->location, ctx->reason,
			   kfree_skb_rx_sk_of(ctx));
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(drop_state_btf, const struct sock *sk, int oldstate, int newstate)
{
	return handle_state(sk, oldstate, newstate);
}

SEC("tracepoint/sock/inet_sock_set_state")
int drop_state_tp(struct trace_event_raw_inet_sock_set_state *ctx)
{
	return handle_state(ctx->skaddr, ctx->oldstate, ctx->newstate);
}
