// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Request ids and traces (user/collectors/links.c): the prefix fits its
 * 24 bits and is never zero, differs from one start to the next; a trace
 * is 32 lowercase hex digits, a function of its root's id alone (a call's
 * trace, made from its parent's id, is its parent's), and differs from
 * root to root; a call's link is named by how its parent was found. */
#include <linux/types.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collectors/tcp/links.h"
#include "lib/record.h"
#include "bpf/tcp/tcp.h"
#include "unit.h"

static int hex_lower(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return s[n] == '\0';
}

/* The link a call's record names, with a parent, by enum tcp_link. */
static int names_link(uint32_t link, const char *want)
{
	struct record r;
	char field[32];
	int found;

	record__init(&r);
	record__begin(&r, "tcp", 1, "n");
	tcp_links__fields(&r, 0x10, 0x20, link);
	record__end(&r);
	snprintf(field, sizeof(field), "\"link\":\"%s\"", want);
	found = strstr(r.json.buf, field) != NULL;
	record__free(&r);
	return found;
}

int main(void)
{
	uint64_t a = tcp_links__prefix("node-1"),
		 b = tcp_links__prefix("node-1");
	char t1[33], t2[33], t3[33];

	CHECK(a && !(a & TCP_ID_SERIAL_MASK));
	CHECK(b && !(b & TCP_ID_SERIAL_MASK));
	CHECK(a != b); /* a restart must not reuse the last run's ids */

	CHECK(tcp_links__cpu_bits(1) == 0);
	CHECK(tcp_links__cpu_bits(2) == 1);
	CHECK(tcp_links__cpu_bits(3) == 2);
	CHECK(tcp_links__cpu_bits(64) == 6);

	tcp_links__trace(a | 7, t1);
	tcp_links__trace(a | 7, t2);
	tcp_links__trace(a | 8, t3);
	CHECK(hex_lower(t1, 32));
	CHECK_STR(t1, t2);
	CHECK(strcmp(t1, t3) != 0);
	CHECK(strncmp(t1, t3, 16) != 0); /* the high half too */

	CHECK(names_link(TCP_LINK_THREAD, "thread"));
	CHECK(names_link(TCP_LINK_SPAWN, "spawn"));
	CHECK(names_link(TCP_LINK_CONNECT, "connect"));
	CHECK(names_link(TCP_LINK_INLINE, "inline"));
	CHECK(names_link(TCP_LINK_INLINE + 1, "unknown"));

	return unit_done("links");
}
