// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: an HTTPS client with OpenSSL linked into the program
 * (libssl.a, libcrypto.a), for TLS read in plaintext where the SSL
 * functions are the program's own, not libssl.so.3's. After WAIT_MS (for
 * kmond to attach at its exec: this test is not about that race), one
 * connection to HOST:PORT (server name SNI), N keep-alive GETs of PATH
 * over HTTP/1.1; prints each answer's status. */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

/* Reads one answer (its head, then Content-Length bytes): its status, or
 * -1. */
static int read_answer(SSL *ssl)
{
	char buf[16384];
	int len = 0, got, status, body;
	char *end, *cl;

	for (;;) {
		got = SSL_read(ssl, buf + len, (int)sizeof(buf) - 1 - len);
		if (got <= 0)
			return -1;
		len += got;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
	}
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		return -1;
	cl = strcasestr(buf, "content-length:");
	body = cl ? atoi(cl + 15) : 0;
	for (int have = len - (int)(end + 4 - buf); have < body; have += got) {
		got = SSL_read(ssl, buf, sizeof(buf));
		if (got <= 0)
			return -1;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char req[512];
	SSL_CTX *ctx;
	SSL *ssl;
	int fd, n;

	if (argc != 7) {
		fprintf(stderr, "usage: %s HOST PORT SNI N PATH WAIT_MS\n",
			argv[0]);
		return 2;
	}
	usleep(atoi(argv[6]) * 1000);
	sa.sin_port = htons(atoi(argv[2]));
	n = atoi(argv[4]);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		return 1;
	}
	ctx = SSL_CTX_new(TLS_client_method());
	ssl = SSL_new(ctx);
	SSL_set_tlsext_host_name(ssl, argv[3]);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		fprintf(stderr, "handshake failed\n");
		return 1;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n",
		 argv[5], argv[3]);
	for (int i = 0; i < n; i++) {
		if (SSL_write(ssl, req, (int)strlen(req)) <= 0) {
			fprintf(stderr, "write failed\n");
			return 1;
		}
		printf("%d\n", read_answer(ssl));
	}
	SSL_shutdown(ssl);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return 0;
}
