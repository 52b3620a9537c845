// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: a client and a server process over one loopback TCP
 * connection, for the order of the two ends of an exchange.
 *   kmt_rpc spin PORT N   N exchanges of 64 bytes each way; both sides
 *                         poll their socket without sleeping, the client
 *                         on CPU 0 and the server on CPU 1, so the client
 *                         reads each answer as soon as it is queued, while
 *                         the server may still be in the send that queued
 *                         it.
 *   kmt_rpc slow PORT MS  one exchange: a 64-byte request, then a 32 MiB
 *                         answer in one send, which blocks (small socket
 *                         buffers) until the client, MS ms after its
 *                         request, reads it all.
 * Prints the number of exchanges done; exits 1 on an error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/pin.h"

#define MSG 64
#define SLOW_ANSWER (32 << 20)
#define SLOW_BUF 16384

/* Reads exactly n bytes; spin: retry at once instead of sleeping. */
static int read_all(int fd, char *buf, size_t n, int spin)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r =
			recv(fd, buf + got, n - got, spin ? MSG_DONTWAIT : 0);

		if (r > 0)
			got += r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}

static int send_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t r = send(fd, buf, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= r;
	}
	return 0;
}

static void small_buffers(int fd)
{
	int size = SLOW_BUF;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

static int serve(int ls, int spin, long n)
{
	char req[MSG], *answer = calloc(1, spin ? MSG : SLOW_ANSWER);
	int one = 1, fd;

	if (spin)
		pin(1);
	fd = accept(ls, NULL, NULL);
	if (fd < 0 || !answer)
		return 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!spin)
		small_buffers(fd);
	for (long i = 0; i < n; i++)
		if (read_all(fd, req, MSG, spin) ||
		    send_all(fd, answer, spin ? MSG : SLOW_ANSWER))
			return 1;
	/* The client closes first: no last request held by a server close. */
	return read_all(fd, req, 1, 0) == -1 ? 0 : 1;
}

static int call(const struct sockaddr_in *a, int spin, long n, long ms)
{
	char *buf = calloc(1, spin ? MSG : SLOW_ANSWER);
	struct timespec wait = { ms / 1000, ms % 1000 * 1000000 };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (spin)
		pin(0);
	else
		small_buffers(fd);
	if (!buf || connect(fd, (const void *)a, sizeof(*a))) {
		perror("connect");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (long i = 0; i < n; i++) {
		if (send_all(fd, buf, MSG))
			return 1;
		if (!spin)
			nanosleep(&wait, NULL);
		if (read_all(fd, buf, spin ? MSG : SLOW_ANSWER, spin))
			return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1, ls, spin, status, rc;
	long n = 1, ms = 0;
	pid_t server;

	if (argc != 4 || (strcmp(argv[1], "spin") && strcmp(argv[1], "slow"))) {
		fprintf(stderr, "usage: %s spin PORT N | slow PORT MS\n",
			argv[0]);
		return 2;
	}
	spin = !strcmp(argv[1], "spin");
	if (spin)
		n = atol(argv[3]);
	else
		ms = atol(argv[3]);
	a.sin_port = htons(atoi(argv[2]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (void *)&a, sizeof(a)) || listen(ls, 1)) {
		perror("listen");
		return 1;
	}
	server = fork();
	if (server == 0)
		_exit(serve(ls, spin, n));
	close(ls);
	rc = call(&a, spin, n, ms);
	if (waitpid(server, &status, 0) != server || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = 1;
	if (!rc)
		printf("%ld\n", n);
	return rc;
}
