/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The local listen list: the TCP ports this host listens on, asked of
 * netlink sock_diag (else read from /proc/net/tcp and /proc/net/tcp6), in
 * kmond's network namespace, and from /proc/PID/net/tcp{,6} of one process
 * in each other namespace (containers). The tcp
 * collector learns from it which connections older than kmond are server
 * side; the provider which process a `port` selector names. */
#ifndef KMON_LISTEN_H
#define KMON_LISTEN_H

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

#endif
