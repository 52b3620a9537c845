/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An address or an address prefix, "10.0.0.0/8", "10.0.0.7", "fd00::/8". */
#ifndef KMON_CIDR_H
#define KMON_CIDR_H

#include <stdint.h>

struct cidr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t bits; /* prefix length: 0..32 or 0..128 */
	uint8_t addr[16]; /* IPv4 in the first 4 bytes; host bits zeroed */
};

/* 0, or -1 when s is neither an address nor address/prefix. */
int cidr__parse(const char *s, struct cidr *out);

#endif
