// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "collectors/tcp/tcp_names.h"
#include "lib/record.h"
#include "provider/provider.h"

static char *format_octet(char *p, unsigned int v)
{
	if (v >= 100)
		*p++ = '0' + v / 100;
	if (v >= 10)
		*p++ = '0' + v / 10 % 10;
	*p++ = '0' + v % 10;
	return p;
}

/* An address's text (no NUL) at p, which has INET6_ADDRSTRLEN bytes;
 * returns its end. IPv4 by hand: inet_ntop formats it with sprintf, a
 * third of the cost of a whole tcp record. */
static char *put_addr(char *p, int family, const __u8 *addr)
{
	if (family == AF_INET6) {
		if (!inet_ntop(AF_INET6, addr, p, INET6_ADDRSTRLEN))
			strcpy(p, "?");
		return p + strlen(p);
	}
	for (int i = 0; i < 4; i++) {
		p = format_octet(p, addr[i]);
		*p++ = '.';
	}
	return p - 1;
}

/* s into buf of len bytes, cut to fit: the names of every client record
 * (its dst), where snprintf's "%s" was a tenth of the record's cost. */
static void copy_name(char *buf, size_t len, const char *s, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

void tcp_names__addr(int family, const __u8 *addr, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	copy_name(buf, len, tmp, put_addr(tmp, family, addr) - tmp);
}

void tcp_names__addr_field(struct record *r, const char *name, int family,
			   const __u8 *addr)
{
	record__plain_end(
		r, put_addr(record__plain_begin(r, name, INET6_ADDRSTRLEN),
			    family, addr));
}

bool tcp_names__is_loopback(int family, const __u8 *addr)
{
	static const __u8 v6_loopback[16] = { [15] = 1 };

	if (family == AF_INET6)
		return memcmp(addr, v6_loopback, 16) == 0;
	return addr[0] == 127;
}

void tcp_names__node(struct provider *p, uint32_t pid, uint32_t svc, char *buf,
		     size_t len, bool *gone)
{
	struct proc_name who;

	provider__name(p, pid, svc, &who);
	*gone = svc == 0 && who.gone;
	if (who.service)
		copy_name(buf, len, who.service, strlen(who.service));
	else if (who.comm[0])
		copy_name(buf, len, who.comm, strlen(who.comm));
	else
		snprintf(buf, len, "pid:%u", pid);
}
