// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: requests whose client resets the connection while the
 * server answers (tcp_load_reset.sh). The server ends a request when it
 * sends the answer, the reset when the connection closes, on another
 * CPU: each request must end once.
 *   kmt_reset serve PORT
 *	on CPU 0, listens on 127.0.0.1:PORT and prints "ready"; then reads a
 *	16-byte request on each connection, answers 16 bytes and reads until
 *	the connection ends. At SIGTERM it prints the requests it read and
 *	the answers it sent in full ("read R answered A").
 *   kmt_reset call PORT N
 *	on CPU 1, makes N connections to it. Each sends a request, waits a
 *	few microseconds (a different wait each time, around the server's
 *	time to answer) and closes with a reset (SO_LINGER 0). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pin.h"

#define MSG 16
#define MAX_WAIT_NS 40000 /* the waits spread over 0 .. 40 us */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The server: until SIGTERM, then its counts. */
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int serve(const struct sockaddr_in *sa)
{
	struct sigaction term = { .sa_handler = on_term }; /* no SA_RESTART */
	char buf[MSG] = { 0 };
	long reads = 0, answers = 0;
	int lfd, one = 1;

	pin(0);
	sigaction(SIGTERM, &term, NULL);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(lfd, 64))
		die("listen");
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		if (read(fd, buf, MSG) > 0) {
			reads++;
			if (write(fd, buf, MSG) == MSG)
				answers++;
		}
		while (read(fd, buf, MSG) > 0)
			;
		close(fd);
	}
	printf("read %ld answered %ld\n", reads, answers);
	return 0;
}

static int call(const struct sockaddr_in *sa, long n)
{
	struct linger rst = { .l_onoff = 1, .l_linger = 0 };
	char req[MSG] = "request";
	unsigned int seed = 1;

	pin(1);
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		long long until;

		if (fd < 0 ||
		    connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
			die("connect");
		if (write(fd, req, MSG) != MSG)
			die("write");
		until = now_ns() + rand_r(&seed) % MAX_WAIT_NS;
		while (now_ns() < until)
			;
		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst)))
			die("SO_LINGER");
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	if (argc < 3 || (strcmp(argv[1], "serve") && strcmp(argv[1], "call")) ||
	    (!strcmp(argv[1], "call") && argc != 4)) {
		fprintf(stderr, "usage: kmt_reset serve PORT | call PORT N\n");
		return 2;
	}
	sa.sin_port = htons(atoi(argv[2]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!strcmp(argv[1], "serve"))
		return serve(&sa);
	return call(&sa, atol(argv[3]));
}
