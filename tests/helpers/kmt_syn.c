// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for TCP drops on loopback.
 *   kmt_syn closed ADDR PORT N
 *	connect()s N times to ADDR:PORT, where nobody listens: each SYN is
 *	dropped by the kernel (NO_SOCKET) and answered with a reset. Fails
 *	unless every connect is refused.
 *   kmt_syn listen ADDR PORT
 *	listens on ADDR:PORT with a socket filter that drops everything
 *	(every SYN is dropped: SOCKET_FILTER, on a socket this process
 *	owns), prints "ready" and waits to be killed.
 *   kmt_syn syn ADDR PORT N
 *	sends N SYNs to ADDR:PORT: non-blocking connects, each closed after
 *	SYN_WAIT_MS, before any retransmission.
 * ADDR is 127.0.0.1 or ::1. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SYN_WAIT_MS 20

static int make_addr(const char *host, int port, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	fprintf(stderr, "kmt_syn: bad address %s\n", host);
	return -1;
}

static int closed(const struct sockaddr_storage *ss, socklen_t len, long n)
{
	for (long i = 0; i < n; i++) {
		int fd = socket(ss->ss_family, SOCK_STREAM, 0);

		if (fd < 0 ||
		    connect(fd, (const struct sockaddr *)ss, len) == 0 ||
		    errno != ECONNREFUSED) {
			fprintf(stderr,
				"kmt_syn: connect %ld was not refused: %s\n", i,
				strerror(errno));
			return 1;
		}
		close(fd);
	}
	return 0;
}

static int drop_all_listener(const struct sockaddr_storage *ss, socklen_t len)
{
	struct sock_filter code[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { .len = 1, .filter = code };
	int one = 1, fd = socket(ss->ss_family, SOCK_STREAM, 0);

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (const struct sockaddr *)ss, len) ||
	    setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    listen(fd, 16)) {
		perror("kmt_syn: listener");
		return -1;
	}
	return fd;
}

static int listen_forever(const struct sockaddr_storage *ss, socklen_t len)
{
	if (drop_all_listener(ss, len) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int syns(const struct sockaddr_storage *ss, socklen_t len, long n)
{
	struct timespec wait = { 0, SYN_WAIT_MS * 1000000L };

	for (long i = 0; i < n; i++) {
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (fd < 0 || (connect(fd, (const struct sockaddr *)ss, len) &&
			       errno != EINPROGRESS)) {
			perror("kmt_syn: connect");
			return 1;
		}
		/* Closed before the first SYN retransmit (1 s): one SYN. */
		nanosleep(&wait, NULL);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	long n;

	if (argc != 5 && !(argc == 4 && strcmp(argv[1], "listen") == 0)) {
		fprintf(stderr,
			"usage: %s closed|syn ADDR PORT N | "
			"listen ADDR PORT\n",
			argv[0]);
		return 2;
	}
	n = argc == 5 ? atol(argv[4]) : 0;
	if (make_addr(argv[2], atoi(argv[3]), &ss, &len))
		return 2;
	if (strcmp(argv[1], "closed") == 0)
		return closed(&ss, len, n);
	if (strcmp(argv[1], "listen") == 0)
		return listen_forever(&ss, len);
	if (strcmp(argv[1], "syn") == 0)
		return syns(&ss, len, n);
	fprintf(stderr, "kmt_syn: unknown mode %s\n", argv[1]);
	return 2;
}
