// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The listen list: lines of /proc/net/tcp{,6}, and the real files. */
#include <stdlib.h>

#include "listen.h"
#include "unit.h"

static void test_lines(void)
{
	struct listener l = { 0 };

	CHECK(listen__parse_line("  sl  local_address rem_address   st "
				 "tx_queue rx_queue tr tm->when retrnsmt   "
				 "uid  timeout inode\n", &l) == -1);
	CHECK(listen__parse_line("   0: 00000000:07E8 00000000:0000 0A "
				 "00000000:00000000 00:00000000 00000000     "
				 "0        0 637 1 00000000083c3e31 100 0 0 10 0\n",
				 &l) == 1);
	CHECK(l.port == 2024 && l.inode == 637);
	/* TIME_WAIT: not a listener */
	CHECK(listen__parse_line("   1: 0100007F:C214 0100007F:8EF9 06 "
				 "00000000:00000000 03:00000C2C 00000000     "
				 "0        0 0 3 000000004b466469\n", &l) == 0);
	CHECK(listen__parse_line("   0: 00000000000000000000000000000000:46A0 "
				 "00000000000000000000000000000000:0000 0A "
				 "00000000:00000000 00:00000000 00000000     "
				 "0        0 59653 1 0000000055d2391a 100 0 0 10 0\n",
				 &l) == 1);
	CHECK(l.port == 0x46A0 && l.inode == 59653);
}

static void test_files(void)
{
	struct listener *ls;
	int n = listen__read(&ls);

	CHECK(n >= 0);
	for (int i = 0; i < n; i++)
		CHECK(ls[i].inode > 0);
	free(ls);
	CHECK(listen__netns() != 0);
}

int main(void)
{
	test_lines();
	test_files();
	return unit_done("listen");
}
