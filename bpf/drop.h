/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* TCP drops: event ABI shared by BPF and user space.
 *
 * Every drop counts in the kernel under a tuple-less key (reason, drop
 * site, owner, network namespace). The first `samples` drops of a key in
 * each interval also go to user space one by one, with their exact
 * 4-tuple and kernel stack; the rest of that interval only count, keeping
 * the last tuple as a sample. A SYN flood thus costs a map update and a
 * lookup (is the sample's stack still kept?) per packet and a bounded
 * number of events, while the usual trickle of drops keeps its per-drop
 * records. The key holds the drop site (kfree_skb's caller), not the
 * stack: a stack walk costs microseconds, so only sampled drops pay for
 * one. */
#ifndef KMON_DROP_H
#define KMON_DROP_H

#define DROP_MAX_KEYS 4096
#define DROP_STACK_ENTRIES 4096
#define DROP_RINGBUF_BYTES (256 * 1024)
#define DROP_MAX_OWNERS 65536
#define DROP_DEFAULT_SAMPLES 16

struct drop_tuple {
	__u8 saddr[16]; /* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u16 sport; /* host order */
	__u16 dport;
	__u16 family; /* AF_INET or AF_INET6 */
	__u16 pad;
};

struct drop_key {
	__u64 location; /* address that freed the skb (the drop site) */
	__u32 reason; /* enum skb_drop_reason value */
	__u32 pid; /* tgid of the socket's owner, 0: unknown */
	__u32 svc; /* its service id, 0: none */
	__u32 netns; /* network namespace inode, 0: unknown */
};

struct drop_event {
	struct drop_key key;
	struct drop_tuple tuple;
	__u64 kstack; /* key in drop_kstacks, 0: no stack */
};

/* Per key; counts are cumulative, user space reports their increase. */
struct drop_agg {
	__u64 count; /* every drop of this key */
	__u64 summarized; /* drops beyond the per-interval samples */
	__u64 window_start; /* ns (monotonic) of the current interval */
	__u64 kstack; /* stack of the last sample, 0: none yet */
	__u32 sent; /* samples sent in the current interval */
	__u32 pad;
	struct drop_tuple sample; /* last summarized drop */
};

/* Owner of a listening port (accepted sockets have no owner entry of
 * their own: they are attributed to the listener's owner). */
struct drop_port_key {
	__u32 netns; /* network namespace inode */
	__u16 port; /* host order */
	__u16 pad;
};

enum drop_stat {
	DROP_EVENTS, /* TCP drops seen (selected) */
	DROP_RB_LOST, /* samples the ringbuf had no room for (counted) */
	DROP_AGG_FULL, /* drops with no room for their key */
	DROP_STACK_LOST, /* samples without a stack (stack map full) */
	DROP_NR_STATS,
};

#endif
