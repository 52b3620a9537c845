// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The listen list: lines of /proc/net/tcp{,6}, and the real files. */
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "provider/listen.h"
#include "unit.h"

static void test_lines(void)
{
	struct listener l = { 0 };

	CHECK(listen__parse_line("  sl  local_address rem_address   st "
				 "tx_queue rx_queue tr tm->when retrnsmt   "
				 "uid  timeout inode\n",
				 &l) == -1);
	CHECK(listen__parse_line(
		      "   0: 00000000:07E8 00000000:0000 0A "
		      "00000000:00000000 00:00000000 00000000     "
		      "0        0 637 1 00000000083c3e31 100 0 0 10 0\n",
		      &l) == 1);
	CHECK(l.port == 2024 && l.inode == 637);
	/* TIME_WAIT: not a listener */
	CHECK(listen__parse_line("   1: 0100007F:C214 0100007F:8EF9 06 "
				 "00000000:00000000 03:00000C2C 00000000     "
				 "0        0 0 3 000000004b466469\n",
				 &l) == 0);
	CHECK(listen__parse_line(
		      "   0: 00000000000000000000000000000000:46A0 "
		      "00000000000000000000000000000000:0000 0A "
		      "00000000:00000000 00:00000000 00000000     "
		      "0        0 59653 1 0000000055d2391a 100 0 0 10 0\n",
		      &l) == 1);
	CHECK(l.port == 0x46A0 && l.inode == 59653);
}

/* Whether every listener /proc/net/tcp{,6} shows is in ls. */
static bool proc_agrees(const struct listener *ls, int n)
{
	static const char *const files[] = { "/proc/net/tcp",
					     "/proc/net/tcp6" };
	char line[512];

	for (int f = 0; f < 2; f++) {
		FILE *in = fopen(files[f], "r");

		while (in && fgets(line, sizeof(line), in)) {
			struct listener l;
			bool found = false;

			if (listen__parse_line(line, &l) != 1)
				continue;
			for (int i = 0; i < n; i++)
				found |= ls[i].inode == l.inode &&
					 ls[i].port == l.port;
			if (!found) {
				fclose(in);
				return false;
			}
		}
		if (in)
			fclose(in);
	}
	return true;
}

/* A socket listening on an ephemeral loopback port: its port. */
static int listen_somewhere(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(*fd, 1) || getsockname(*fd, (struct sockaddr *)&a, &len))
		return -1;
	return ntohs(a.sin_port);
}

static void test_own_listener(void)
{
	struct listener *ls;
	int fd, port = listen_somewhere(&fd), n;
	bool found = false;

	CHECK(port > 0);
	n = listen__read(&ls);
	for (int i = 0; i < n; i++)
		found |= ls[i].port == port;
	CHECK(found);
	free(ls);
	close(fd);
	n = listen__read(&ls);
	found = false;
	for (int i = 0; i < n; i++)
		found |= ls[i].port == port;
	CHECK(!found);
	free(ls);
}

/* sock_diag's answer is what /proc says (a listener may come or go
 * between the two reads: a few tries). */
static void test_live(void)
{
	bool agree = false;

	for (int tries = 0; tries < 3 && !agree; tries++) {
		struct listener *ls;
		int n = listen__read(&ls);

		CHECK(n >= 0);
		agree = n >= 0 && proc_agrees(ls, n);
		free(ls);
	}
	CHECK(agree);
	CHECK(listen__netns() != 0);
}

int main(void)
{
	test_lines();
	test_own_listener();
	test_live();
	return unit_done("listen");
}
