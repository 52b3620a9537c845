/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Addresses to listen on or to call, as the config writes them. */
#ifndef KMON_HOSTPORT_H
#define KMON_HOSTPORT_H

#include <stddef.h>
#include <stdint.h>

#define HOSTPORT_HOST_MAX 256

/* "host:port" or "[v6]:port" -> host (brackets stripped) and port (1 ..
 * 65535, digits). Returns 0, or -1 with why. */
int hostport__parse(const char *s, char *host, size_t hostlen, char *port,
		    size_t portlen, char *why, size_t whylen);

/* The other way: "a.b.c.d:port" or "[v6]:port" (family AF_INET: the
 * address in addr's first 4 bytes). */
void hostport__format(int family, const uint8_t *addr, unsigned int port,
		      char *buf, size_t len);

#endif
