// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Protocol identification on the first messages of real connections
 * (the .txt files of tests/unit/protocol, recorded from Debian's clients and servers
 * with tests/lib/proto_capture.py), as the kernel captures them and as
 * clients split, pipeline or withhold them; and on inputs that must stay
 * unknown: random bytes, a length-prefixed protocol of our own, replies
 * that contradict their requests. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/protocol.h"
#include "unit.h"

#define FIXTURES "tests/unit/protocol"
#define MAX_MSGS 16
#define MAX_BYTES 512

struct fixture {
	char name[128];
	char expect[32];
	size_t n;
	struct proto_msg m[MAX_MSGS];
	uint8_t data[MAX_MSGS][MAX_BYTES];
};

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Reads one fixture; exits on a malformed one (a broken fixture is a
 * broken test, not a pass). */
static void load(const char *path, struct fixture *f)
{
	char line[4096], tag;
	FILE *fp = fopen(path, "r");
	unsigned int len;
	int off;

	if (!fp) {
		perror(path);
		exit(1);
	}
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", strrchr(path, '/') + 1);
	while (fgets(line, sizeof(line), fp)) {
		struct proto_msg *m = &f->m[f->n];
		size_t k = 0;

		if (sscanf(line, "# expect: %31s", f->expect) == 1)
			continue;
		if (f->n == MAX_MSGS)
			break;
		if (sscanf(line, "%c %u %n", &tag, &len, &off) != 2 ||
		    (tag != 'C' && tag != 'S')) {
			fprintf(stderr, "%s: bad line: %s", path, line);
			exit(1);
		}
		for (char *h = line + off;
		     h[0] && h[1] && h[0] != '\n' && k < MAX_BYTES; h += 2)
			f->data[f->n][k++] = hexval(h[0]) << 4 | hexval(h[1]);
		m->from_server = tag == 'S';
		m->len = len;
		m->caplen = k;
		m->data = f->data[f->n];
		f->n++;
	}
	fclose(fp);
	if (!f->expect[0] || !f->n) {
		fprintf(stderr, "%s: no expect line or no messages\n", path);
		exit(1);
	}
}

/* What the kernel hands over: the first `each` messages each way, `cap`
 * bytes of each. */
static size_t kernel_view(const struct fixture *f, size_t each, uint32_t cap,
			  struct proto_msg *out)
{
	size_t n = 0, c = 0, s = 0;

	for (size_t i = 0; i < f->n; i++) {
		size_t *count = f->m[i].from_server ? &s : &c;

		if (*count == each)
			continue;
		(*count)++;
		out[n] = f->m[i];
		if (out[n].caplen > cap)
			out[n].caplen = cap;
		n++;
	}
	return n;
}

static int classify(const struct proto_msg *m, size_t n, bool done,
		    struct proto_result *r)
{
	protocol__classify(m, n, done, r);
	return r->decided ? r->proto : -1;
}

static void check_fixture(const struct fixture *f)
{
	struct proto_msg m[MAX_MSGS + 1];
	uint8_t split[MAX_BYTES];
	struct proto_result r;
	size_t n;
	int got;

	/* as the kernel captures it, decided once the limit is reached */
	n = kernel_view(f, PROTO_MAX_SEGS, PROTO_SAMPLE_BYTES, m);
	got = classify(m, n, true, &r);
	if (strcmp(protocol__name(got), f->expect))
		fprintf(stderr, "%s: kernel view\n", f->name);
	CHECK_STR(protocol__name(got), f->expect);
	/* the first message each way is enough */
	n = kernel_view(f, 1, PROTO_SAMPLE_BYTES, m);
	got = classify(m, n, false, &r);
	if (strcmp(protocol__name(got), f->expect))
		fprintf(stderr, "%s: first message each way\n", f->name);
	CHECK_STR(protocol__name(got), f->expect);
	/* one direction alone is no evidence, except a server greeting */
	n = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->m[i].from_server == f->m[0].from_server)
			m[n++] = f->m[i];
	got = classify(m, n, true, &r);
	if (f->m[0].from_server &&
	    (!strcmp(f->expect, "mysql") || !strcmp(f->expect, "ssh")))
		CHECK_STR(protocol__name(got), f->expect);
	else
		CHECK_STR(protocol__name(got), "unknown");
	/* the first message each way, with the first one split in two
	 * writes at every point of its first 32 bytes */
	if (f->m[0].caplen != f->m[0].len || f->m[0].len < 2)
		return;
	memcpy(split, f->m[0].data, f->m[0].caplen);
	for (uint32_t at = 1; at < f->m[0].len && at < 32; at++) {
		size_t k;

		m[0] = f->m[0];
		m[0].len = m[0].caplen = at;
		m[1] = f->m[0];
		m[1].len = m[1].caplen = f->m[0].len - at;
		m[1].data = split + at;
		for (k = 1;
		     k < f->n && f->m[k].from_server == f->m[0].from_server;
		     k++)
			;
		if (k == f->n)
			continue;
		m[2] = f->m[k];
		/* undecided after the first piece alone (or a greeting) */
		got = classify(m, 1, false, &r);
		CHECK(got == -1 || !strcmp(protocol__name(got), f->expect) ||
		      (got == PROTO_UNKNOWN && !f->m[0].from_server));
		got = classify(m, 3, false, &r);
		if (strcmp(protocol__name(got), f->expect))
			fprintf(stderr, "%s: split at %u\n", f->name, at);
		CHECK_STR(protocol__name(got), f->expect);
	}
}

static void test_fixtures(void)
{
	DIR *d = opendir(FIXTURES);
	struct fixture *f = malloc(sizeof(*f));
	struct dirent *e;
	char path[512];
	int count = 0;
	bool seen[PROTO_NR] = { 0 };

	if (!d || !f) {
		perror(FIXTURES);
		exit(1);
	}
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".txt"))
			continue;
		snprintf(path, sizeof(path), FIXTURES "/%s", e->d_name);
		load(path, f);
		check_fixture(f);
		for (int p = 0; p < PROTO_NR; p++)
			if (!strcmp(protocol__name(p), f->expect))
				seen[p] = true;
		count++;
	}
	closedir(d);
	free(f);
	/* every protocol has a recording */
	CHECK(count >= 22);
	for (int p = 1; p < PROTO_NR; p++)
		if (!seen[p]) {
			fprintf(stderr, "no fixture of %s\n",
				protocol__name(p));
			CHECK(seen[p]);
		}
}

/* The server name from the recorded ClientHello, when the capture is
 * long enough to hold it (not at 64 bytes). */
static void test_sni(void)
{
	struct fixture *f = malloc(sizeof(*f));
	struct proto_result r;

	load(FIXTURES "/tls_openssl_sni.txt", f);
	CHECK(classify(f->m, 2, false, &r) == PROTO_TLS);
	CHECK_STR(r.sni, "api.internal.example");
	free(f);
}

static struct proto_msg msg(bool from_server, const void *data, size_t len)
{
	return (struct proto_msg){ from_server, len, len, data };
}

/* Built from the protocols' specifications (ZooKeeper's ConnectRequest
 * and ConnectResponse, AMQP's header and Connection.Start). */
static void test_handmade(void)
{
	static const uint8_t zk_req[49] = {
		0, 0, 0,    45,	  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0x75, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16,
	};
	static const uint8_t zk_resp[41] = {
		0,    0,    0,	  37,	0,    0,    0,	  0,	0,
		0,    0x75, 0x30, 0x01, 0x8b, 0x2c, 0x11, 0x22, 0x33,
		0x44, 0x55, 0,	  0,	0,    16,   0xaa,
	};
	static const uint8_t amqp_start[40] = {
		1, 0, 0, 0, 0, 1, 0xf4, 0, 10, 0, 10, 0, 9, 0, 0, 1, 0xd0,
	};
	struct proto_msg m[3];
	struct proto_result r;

	m[0] = msg(false, zk_req, sizeof(zk_req));
	m[1] = msg(true, zk_resp, sizeof(zk_resp));
	CHECK(classify(m, 2, false, &r) == PROTO_ZOOKEEPER);
	m[0] = msg(false, "AMQP\0\0\x09\x01", 8);
	m[1] = msg(true, amqp_start, sizeof(amqp_start));
	CHECK(classify(m, 2, false, &r) == PROTO_AMQP);
	/* a ZooKeeper four-letter word is not the binary protocol */
	m[0] = msg(false, "ruok", 4);
	m[1] = msg(true, "imok", 4);
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
}

/* Requests and replies that do not belong together stay unknown. */
static void test_contradictions(void)
{
	const char *get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct proto_msg m[3];
	struct proto_result r;

	m[0] = msg(false, get, strlen(get));
	m[1] = msg(true, "+OK\r\n", 5);
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
	m[1] = msg(true, "\0\0\0\4\0\0\0\0\0", 9); /* HTTP/2 SETTINGS */
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
	m[1] = msg(true, "SSH-2.0-x\r\n", 11);
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
	/* an SSH banner answered by an HTTP request */
	m[0] = msg(true, "SSH-2.0-OpenSSH_9.2\r\n", 21);
	m[1] = msg(false, get, strlen(get));
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
	/* a request, and nothing back: wait, then unknown */
	m[0] = msg(false, get, strlen(get));
	CHECK(classify(m, 1, false, &r) == -1);
	CHECK(classify(m, 1, true, &r) == PROTO_UNKNOWN);
	/* a client that sends nothing */
	CHECK(classify(m, 0, false, &r) == -1);
	CHECK(classify(m, 0, true, &r) == PROTO_UNKNOWN);
	/* a server greeting nobody knows (SMTP) */
	m[0] = msg(true, "220 mail ESMTP\r\n", 16);
	m[1] = msg(false, "EHLO x\r\n", 8);
	CHECK(classify(m, 2, false, &r) == PROTO_UNKNOWN);
	/* pipelined: two requests in one write, then their two replies */
	m[0] = msg(false, "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", 28);
	m[1] = msg(true, "+PONG\r\n+PONG\r\n", 14);
	CHECK(classify(m, 2, false, &r) == PROTO_REDIS);
	/* an HTTP request line longer than the capture */
	m[0] = (struct proto_msg){
		false, 300, 64,
		(const uint8_t
			 *)"GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	};
	m[1] = msg(true, "HTTP/1.1 200 OK\r\n", 17);
	CHECK(classify(m, 2, false, &r) == PROTO_HTTP);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Random bytes both ways, and a length-prefixed binary protocol of our
 * own (u32 length, u16 type, u16 flags, u32 request id echoed by the
 * reply): never named (or, for ours, at most 1 in 1000). */
static void test_foreign(void)
{
	uint8_t req[PROTO_SAMPLE_BYTES], resp[PROTO_SAMPLE_BYTES];
	struct proto_msg m[2];
	struct proto_result r;
	int named = 0, custom_named = 0;

	for (int i = 0; i < 200000; i++) {
		uint32_t rl = 1 + next_rand() % sizeof(req);
		uint32_t sl = 1 + next_rand() % sizeof(resp);

		for (size_t k = 0; k < sizeof(req); k++) {
			req[k] = next_rand();
			resp[k] = next_rand();
		}
		m[0] = msg(false, req, rl);
		m[1] = msg(true, resp, sl);
		if (classify(m, 2, true, &r) != PROTO_UNKNOWN)
			named++;
		/* the custom protocol: a real length, small types and
		 * flags, the id echoed */
		rl = 12 + next_rand() % (sizeof(req) - 12);
		sl = 12 + next_rand() % (sizeof(resp) - 12);
		req[0] = resp[0] = 0;
		req[1] = resp[1] = 0;
		req[2] = (rl - 4) >> 8;
		req[3] = rl - 4;
		resp[2] = (sl - 4) >> 8;
		resp[3] = sl - 4;
		req[4] = resp[4] = 0;
		req[5] = resp[5] = next_rand() % 32;
		req[6] = resp[6] = 0;
		req[7] = resp[7] = next_rand() % 4;
		/* the id where the reply has it: after the type (half of
		 * them), or first (as Kafka's correlation id) */
		if (i % 2)
			memcpy(resp + 8, req + 8, 4);
		else
			memcpy(resp + 4, req + 8, 4);
		m[0] = msg(false, req, rl);
		m[1] = msg(true, resp, sl);
		if (classify(m, 2, true, &r) != PROTO_UNKNOWN) {
			if (custom_named < 3)
				fprintf(stderr, "custom protocol named %s\n",
					protocol__name(r.proto));
			custom_named++;
		}
	}
	printf("random pairs named: %d of 200000, custom: %d of 200000\n",
	       named, custom_named);
	CHECK(named == 0);
	/* no more than 1 in 1000 of our own protocol's connections */
	CHECK(custom_named <= 200);
}

int main(void)
{
	test_fixtures();
	test_sni();
	test_handmade();
	test_contradictions();
	test_foreign();
	return unit_done("protocol");
}
