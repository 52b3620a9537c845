/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The names the tcp collector's records give their ends: addresses as
 * text, and topology nodes (a service, a process name, a pid). */
#ifndef KMON_TCP_NAMES_H
#define KMON_TCP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

struct provider;
struct record;

void tcp_names__addr(int family, const __u8 *addr, char *buf, size_t len);
/* An address field, written straight into the record: nothing in it to
 * escape. */
void tcp_names__addr_field(struct record *r, const char *name, int family,
			   const __u8 *addr);
bool tcp_names__is_loopback(int family, const __u8 *addr);
/* A topology node: the service, else the process name (every process
 * is monitored), else the pid. *gone: a process it names exited. */
void tcp_names__node(struct provider *p, uint32_t pid, uint32_t svc, char *buf,
		     size_t len, bool *gone);

#endif
