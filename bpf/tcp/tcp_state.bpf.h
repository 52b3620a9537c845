/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The tcp collector's kernel state: the connection states, where they
 * live, and the maps every part of bpf/tcp/tcp.bpf.c shares (protocol
 * identification, loads, request paths, batches), with the functions of
 * tcp.bpf.c those parts call. Included once, by tcp.bpf.c and its
 * parts. */
#ifndef KMON_TCP_STATE_BPF_H
#define KMON_TCP_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "maps.bpf.h"
#include "tcp.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define MSG_PEEK 0x2
#define MSG_ERRQUEUE 0x2000
#define E2BIG 7
#define EEXIST 17

/* Where connection state lives. With every hook on tp_btf the sockets
 * are BTF pointers, and the state sits in the socket itself (socket
 * storage): found with a load from a socket the kernel has just used
 * instead of a probe of a cold hash, never full, freed with the socket.
 * The other hooks (raw_tp, tracepoint, syscalls) hand over plain
 * addresses and use the conns hash, keyed by the address. Set before
 * load (user space then shrinks conns to one entry). */
const volatile bool conn_in_socket;

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tcp_conn);
} sock_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_CONNS);
	__type(key, __u64); /* struct sock * */
	__type(value, struct tcp_conn);
} conns SEC(".maps");

/* Server connections closed while a request was in: on loopback the
 * peer's reset can close the socket inside the very send that answers
 * it, before sock_send_length fires; that send finishes the request. An
 * LRU: requests never answered simply age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_CLOSING);
	__type(key, __u64); /* struct sock * */
	__type(value, struct tcp_conn);
} closing SEC(".maps");

/* Client tuple (its own view) -> its owner, so the server end of a local
 * connection can name the service that called it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_PEERS);
	__type(key, struct tcp_tuple);
	__type(value, struct tcp_peer);
} peers SEC(".maps");

/* Client tuple (its own view) -> the server's owner, written by the
 * server end of a local connection when its client is monitored too, so
 * the client end can name the service it called (and leave the edge to
 * the server end, which counts it). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCP_MAX_PEERS);
	__type(key, struct tcp_tuple);
	__type(value, struct tcp_peer);
} server_of SEC(".maps");

/* Services whose client side is off (client: false): id -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_CLIENT_OFF);
	__type(key, __u32);
	__type(value, __u32);
} client_off SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCP_MAX_LISTEN);
	__type(key, struct tcp_listen_key);
	__type(value, __u32);
} listen_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, TCP_MAX_NODES);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* required; never updated here */
	__type(key, struct tcp_node_key);
	__type(value, __u32);
} known_nodes SEC(".maps");

/* Grown on demand: an edge's value holds a whole histogram per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, TCP_MAX_EDGES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct tcp_edge);
	__type(value, struct tcp_edge_val);
} edges SEC(".maps");

/* Never written: the zeroes a new edge starts from (too big for the
 * stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcp_edge_val);
} edge_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcp_ctl);
} tcp_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TCP_RINGBUF_BYTES);
} tcp_events SEC(".maps");

KMON_STATS_MAP(tcp_stats, TCP_NR_STATS);

/* Requests seen by the sample policy, over all CPUs, per side (enum
 * tcp_side): exactly one in `sample` of each side is sent. Reset by user
 * space when the policy is applied. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sample_count SEC(".maps");

/* Defined in tcp.bpf.c, called by its parts. */
static __always_inline __u64 wakeup_flags(void);
static __always_inline void edge_reattribute(const struct tcp_conn *c);
static __always_inline void read_tuple(const struct sock *sk,
				       struct tcp_tuple *t, bool trusted);
static __always_inline void fill_event(struct tcp_event *ev,
				       const struct tcp_conn *c, __u64 latency);

/* A full barrier, each side of a store buffering on a socket (each side
 * writes, then reads what the other wrote): the state made while a reset
 * closes the socket on another CPU (conn_of's second look at sk_ending,
 * on_close). x86's locked instructions give it anyway; arm64's map update
 * ends in a release and the kernel's reset path has only a DMB ISHST
 * between sk_err and the close, neither of which keeps a later load
 * after an earlier store. A fetching atomic (LDADDAL) does: its result
 * used, else clang emits the non-fetching form, a STADD that orders
 * nothing. w is a word of this CPU's (or
 * one that adding 0 to leaves as it is: head_fence). */
static __always_inline void sk_order(__u64 *w, __s64 delta)
{
	__u64 old = __sync_fetch_and_add(w, delta);

	barrier_var(old);
}

#endif
