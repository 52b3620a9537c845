/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The local listen list: the TCP ports this host listens on, asked of
 * netlink sock_diag (else read from /proc/net/tcp and /proc/net/tcp6), in
 * kmond's network namespace, and from /proc/PID/net/tcp{,6} of one process
 * in each other namespace (containers). The tcp
 * collector learns from it which connections older than kmond are server
 * side; the provider which process a `port` selector names. */
#ifndef KMON_LISTEN_H
#define KMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct listener {
	uint16_t port;
	uint64_t inode; /* of the socket: /proc/PID/fd/N -> socket:[inode] */
	uint32_t netns; /* inode of its network namespace */
};

/* Every listening socket (one per address and family, so a port may
 * repeat), in every network namespace a process lives in. Returns how
 * many, with *out malloc'd (free it), or -errno. */
int listen__read(struct listener **out);
/* One line of /proc/net/tcp{,6}: 1 and *l when it is a listener, 0 when
 * not, -1 when it cannot be read (the header line). */
int listen__parse_line(const char *line, struct listener *l);
/* The inode of kmond's network namespace (what the kernel's ns.inum
 * says of sockets in it), 0 when unknown. */
uint32_t listen__netns(void);
/* Calls found for every socket every process holds (an fd of it): one
 * walk of every /proc/PID/fd. A socket shared by several processes is
 * found once for each, in the order /proc lists them. */
void listen__socket_holders(void (*found)(void *ctx, uint64_t inode,
					  uint32_t pid),
			    void *ctx);

/* The listen list, read again only when it may have changed. Reading it
 * costs a walk of /proc and, for each other network namespace, of the
 * host's whole established table (/proc/PID/net/tcp); a kernel count of
 * the listen()s and listener closes, in every namespace, says when:
 * the list is read at the first call after the count moved, and once
 * more at least LISTEN_SETTLE_NS later (the count moves just before the
 * listener is hashed, and a read may fall between). Without a count it
 * is read at each call. */
struct listen_cache {
	struct listener *ls;
	int n;
	uint64_t version; /* bumped at each read */
	const volatile uint64_t *changes; /* NULL: nothing counts */
	uint64_t seen; /* *changes at the last read */
	bool valid; /* ls holds a read */
	bool settle; /* read once more after settle_ns */
	uint64_t settle_ns; /* CLOCK_MONOTONIC */
};

#define LISTEN_SETTLE_NS (100ULL * 1000000)

/* The list (*out stays valid until the next call) and its version, which
 * changes when it was read again; returns how many, or -errno. */
int listen_cache__get(struct listen_cache *lc, const struct listener **out,
		      uint64_t *version);
/* Reads the list from now on only when *changes moved (NULL: at each
 * call). The next call reads it. */
void listen_cache__count(struct listen_cache *lc,
			 const volatile uint64_t *changes);
void listen_cache__free(struct listen_cache *lc);

#endif
