// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/cidr.h"

int cidr__parse(const char *s, struct cidr *out)
{
	const char *slash = strchr(s, '/');
	char addr[INET6_ADDRSTRLEN];
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long bits;
	char *end;
	int max;

	if (len == 0 || len >= sizeof(addr))
		return -1;
	memcpy(addr, s, len);
	addr[len] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, addr, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, out->addr) == 1)
		out->family = AF_INET6;
	else
		return -1;
	max = out->family == AF_INET ? 32 : 128;
	bits = max;
	if (slash) {
		bits = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || bits > (unsigned long)max)
			return -1;
	}
	out->bits = (uint8_t)bits;
	for (int i = 0; i < 16; i++) {
		int keep = (int)bits - 8 * i;

		if (keep <= 0)
			out->addr[i] = 0;
		else if (keep < 8)
			out->addr[i] &= (uint8_t)(0xff << (8 - keep));
	}
	return 0;
}
