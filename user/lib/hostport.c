// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "lib/hostport.h"

static int parse_port(const char *s, char *port, size_t portlen)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)s[0]) || strlen(s) >= portlen)
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno || v < 1 || v > 65535)
		return -1;
	snprintf(port, portlen, "%lu", v);
	return 0;
}

int hostport__parse(const char *s, char *host, size_t hostlen, char *port,
		    size_t portlen, char *why, size_t whylen)
{
	const char *colon;
	size_t n;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		struct in6_addr a;

		if (!close || close[1] != ':') {
			snprintf(why, whylen,
				 "'%s': expected [v6 address]:port", s);
			return -1;
		}
		n = close - s - 1;
		colon = close + 1;
		s++;
		if (n >= hostlen) {
			snprintf(why, whylen, "the address is too long");
			return -1;
		}
		memcpy(host, s, n);
		host[n] = '\0';
		if (inet_pton(AF_INET6, host, &a) != 1) {
			snprintf(why, whylen, "'%s' is no IPv6 address", host);
			return -1;
		}
	} else {
		colon = strchr(s, ':');
		n = colon ? (size_t)(colon - s) : 0;
		if (!colon || n == 0 || strchr(colon + 1, ':')) {
			snprintf(
				why, whylen,
				"'%s': expected host:port or [v6 address]:port",
				s);
			return -1;
		}
		if (n >= hostlen) {
			snprintf(why, whylen, "the host name is too long");
			return -1;
		}
		memcpy(host, s, n);
		host[n] = '\0';
	}
	if (parse_port(colon + 1, port, portlen)) {
		snprintf(why, whylen, "'%s' is no port (1 to 65535)",
			 colon + 1);
		return -1;
	}
	return 0;
}

void hostport__format(int family, const uint8_t *addr, unsigned int port,
		      char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, host,
		       sizeof(host)))
		snprintf(host, sizeof(host), "?");
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
		 port);
}
