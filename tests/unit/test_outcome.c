// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The request-outcome classifier (bpf/tcp/outcome.h) on response heads
 * written from the protocols' specifications and taken from the real
 * traffic of tests/unit/protocol and tests/unit/outcome (nginx, Redis,
 * PostgreSQL, MariaDB, memcached and dnsmasq answering Debian's clients):
 * the status and the error of each, on both sides where the side matters
 * (HTTP). Then every head cut short:
 * a prefix must give unknown or the whole head's answer, never another;
 * and bytes past the captured length must change nothing (the kernel's
 * buffer holds an earlier response's there). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/tcp/outcome.h"
#include "fixture.h"
#include "unit.h"

#define S TCP_SIDE_SERVER
#define C TCP_SIDE_CLIENT
#define UNKNOWN -1
#define NO_STATUS -1

struct want {
	int proto, side;
	const char *b;
	size_t len;
	int error; /* 0, 1, or UNKNOWN */
	long status; /* with has_status, or NO_STATUS */
	int status_class;
};

/* A literal (sizeof - 1): the heads hold NULs. */
#define B(s) s, sizeof(s) - 1

static const struct want wants[] = {
	/* HTTP/1: the server fails on 5xx, its client on 4xx too */
	{ PROTO_HTTP, S, B("HTTP/1.1 404 Not Found\r\nServer: nginx\r\n"), 0,
	  404, 4 },
	{ PROTO_HTTP, C, B("HTTP/1.1 404 Not Found\r\nServer: nginx\r\n"), 1,
	  404, 4 },
	{ PROTO_HTTP, S, B("HTTP/1.1 500 Internal Server Error\r\n"), 1, 500,
	  5 },
	{ PROTO_HTTP, C, B("HTTP/1.1 503 Service Unavailable\r\n"), 1, 503, 5 },
	{ PROTO_HTTP, C, B("HTTP/1.0 200 OK\r\n"), 0, 200, 2 },
	{ PROTO_HTTP, S, B("HTTP/1.1 301 Moved Permanently\r\n"), 0, 301, 3 },
	{ PROTO_HTTP, C, B("HTTP/1.1 101 Switching Protocols\r\n"), 0, 101, 1 },
	{ PROTO_HTTP, S, B("HTTP/1.1 404"), UNKNOWN, NO_STATUS, 0 },
	/* interim: the final status follows, past what the head says */
	{ PROTO_HTTP, C, B("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_HTTP, C, B("HTTP/1.1 4040 Nonsense\r\n"), UNKNOWN, NO_STATUS,
	  0 },
	{ PROTO_HTTP, C, B("HTTP/1.1 999 Nonsense\r\n"), UNKNOWN, NO_STATUS,
	  0 },
	{ PROTO_HTTP, C, B("HTTP/2.0 200 OK\r\n"), UNKNOWN, NO_STATUS, 0 },
	{ PROTO_HTTP, C, B("SSH-2.0-OpenSSH_9.2\r\n"), UNKNOWN, NO_STATUS, 0 },
	/* HTTP/2: HEADERS 0x88 (200), 0x8d (404), a literal 503 (name 8,
	 * incremental indexing, 3 raw digits) */
	{ PROTO_HTTP2, S, B("\x00\x00\x01\x01\x04\x00\x00\x00\x01\x88"), 0, 200,
	  2 },
	{ PROTO_HTTP2, S, B("\x00\x00\x01\x01\x04\x00\x00\x00\x03\x8d"), 0, 404,
	  4 },
	{ PROTO_HTTP2, C, B("\x00\x00\x01\x01\x04\x00\x00\x00\x03\x8d"), 1, 404,
	  4 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x48\x03"
	    "503"),
	  1, 503, 5 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x08\x03"
	    "429"),
	  1, 429, 4 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x18\x03"
	    "201"),
	  0, 201, 2 },
	/* the server's SETTINGS and its ACK, a WINDOW_UPDATE, then HEADERS */
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64"
	    "\x00\x00\x00\x04\x01\x00\x00\x00\x00"
	    "\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x0f\x00\x01"
	    "\x00\x00\x01\x01\x04\x00\x00\x00\x01\x8e"),
	  1, 500, 5 },
	/* PADDED (a pad length byte) and PRIORITY (5 bytes) */
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x04\x01\x0c\x00\x00\x00\x01\x02\x8d\x00\x00"), 1, 404,
	  4 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x06\x01\x24\x00\x00\x00\x01\x00\x00\x00\x00\x0f\x88"), 0,
	  200, 2 },
	/* Huffman-coded digits: RFC 7541 C.6's 302 and 307; 502 and 401 as
	 * Go's and nghttp2's encoders send them; 201 with its padding bit;
	 * bad padding, a non-digit code, a too long value: unknown */
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x48\x82\x64\x02"), 0, 302,
	  3 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x48\x83\x64\x0e\xff"), 0, 307,
	  3 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x08\x82\x6c\x02"), 1, 502,
	  5 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x48\x82\x68\x01"), 1, 401,
	  4 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x48\x82\x10\x03"), 0, 201,
	  2 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x48\x82\x10\x02"), UNKNOWN,
	  NO_STATUS, 0 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x04\x01\x04\x00\x00\x00\x01\x48\x82\x60\x02"), UNKNOWN,
	  NO_STATUS, 0 },
	{ PROTO_HTTP2, S,
	  B("\x00\x00\x05\x01\x04\x00\x00\x00\x01\x48\x83\x10\x03\xff"),
	  UNKNOWN, NO_STATUS, 0 },
	/* dynamic table, DATA first, RST_STREAM first: not read */
	{ PROTO_HTTP2, C, B("\x00\x00\x01\x01\x04\x00\x00\x00\x01\xbe"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_HTTP2, C, B("\x00\x00\x02\x00\x01\x00\x00\x00\x01hi"), UNKNOWN,
	  NO_STATUS, 0 },
	{ PROTO_HTTP2, C,
	  B("\x00\x00\x04\x03\x00\x00\x00\x00\x01\x00\x00\x00\x02"), UNKNOWN,
	  NO_STATUS, 0 },
	/* Redis, RESP2 and RESP3 */
	{ PROTO_REDIS, S,
	  B("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
	  1, NO_STATUS, 0 },
	{ PROTO_REDIS, C,
	  B("-ERR unknown command 'FOO', with args beginning with: \r\n"), 1,
	  NO_STATUS, 0 },
	{ PROTO_REDIS, C, B("!21\r\nSYNTAX invalid syntax\r\n"), 1, NO_STATUS,
	  0 },
	{ PROTO_REDIS, C, B("+OK\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_REDIS, C, B("$-1\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_REDIS, C, B(":42\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_REDIS, C, B("%1\r\n+a\r\n:1\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_REDIS, C, B(">3\r\n$7\r\nmessage\r\n"), UNKNOWN, NO_STATUS, 0 },
	/* PostgreSQL: ErrorResponse with S, V, C fields; the extended
	 * protocol's ParseComplete and BindComplete before an error and
	 * before a CommandComplete; a RowDescription then a DataRow */
	{ PROTO_POSTGRESQL, S,
	  B("E\x00\x00\x00\x5bSERROR\0VERROR\0C42601\0Msyntax error at or near \"selec\"\0P1\0Fscan.l\0L1176\0\0"),
	  1, NO_STATUS, 0 },
	{ PROTO_POSTGRESQL, C,
	  B("1\x00\x00\x00\x04"
	    "2\x00\x00\x00\x04"
	    "E\x00\x00\x00\x60SERROR\0VERROR\0C23505\0"),
	  1, NO_STATUS, 0 },
	{ PROTO_POSTGRESQL, C,
	  B("1\x00\x00\x00\x04"
	    "2\x00\x00\x00\x04"
	    "n\x00\x00\x00\x04"
	    "C\x00\x00\x00\x0fINSERT 0 1\0"),
	  0, NO_STATUS, 0 },
	{ PROTO_POSTGRESQL, S,
	  B("T\x00\x00\x00\x21\x00\x01?column?\0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x00"
	    "D\x00\x00\x00\x0b\x00\x01\x00\x00\x00\x01"
	    "1"),
	  0, NO_STATUS, 0 },
	{ PROTO_POSTGRESQL, S, B("Z\x00\x00\x00\x05I"), 0, NO_STATUS, 0 },
	{ PROTO_POSTGRESQL, C, B("N"), UNKNOWN, -1,
	  0 }, /* SSLRequest refused */
	{ PROTO_POSTGRESQL, C, B("X\x00\x00\x00\x04"), UNKNOWN, NO_STATUS, 0 },
	/* MySQL / MariaDB: ERR 1064, OK, a result set's column count */
	{ PROTO_MYSQL, S,
	  B("\xa2\x00\x00\x01\xff\x28\x04#42000You have an error in your SQL syntax"),
	  1, 1064, 0 },
	{ PROTO_MYSQL, C, B("\x07\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00"), 0,
	  NO_STATUS, 0 },
	{ PROTO_MYSQL, C,
	  B("\x01\x00\x00\x01\x01\x18\x00\x00\x02\x03"
	    "def"),
	  0, NO_STATUS, 0 },
	/* memcached text and binary */
	{ PROTO_MEMCACHED, S, B("ERROR\r\n"), 1, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, S, B("CLIENT_ERROR bad data chunk\r\n"), 1,
	  NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C,
	  B("SERVER_ERROR out of memory storing object\r\n"), 1, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("NOT_FOUND\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("END\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("VALUE foo 0 3\r\nbar\r\nEND\r\n"), 0,
	  NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("STORED\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("EN\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("43\r\n"), 0, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C, B("ERRORS\r\n"), UNKNOWN, NO_STATUS, 0 },
	{ PROTO_MEMCACHED, C,
	  B("\x81\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x09"), 0, 1, 0 },
	{ PROTO_MEMCACHED, C,
	  B("\x81\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 0, 0, 0 },
	{ PROTO_MEMCACHED, C,
	  B("\x81\x01\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00"), 1, 4, 0 },
	{ PROTO_MEMCACHED, C,
	  B("\x81\x01\x00\x00\x00\x00\x00\x81\x00\x00\x00\x00"), 1, 0x81, 0 },
	/* DNS over TCP: NXDOMAIN is an answer, SERVFAIL and REFUSED fail */
	{ PROTO_DNS, C, B("\x00\x3a\xc8\x7c\x81\x83\x00\x01\x00\x00\x00\x01"),
	  0, 3, 0 },
	{ PROTO_DNS, S, B("\x00\x3a\xc8\x7c\x81\x82\x00\x01\x00\x00\x00\x00"),
	  1, 2, 0 },
	{ PROTO_DNS, C, B("\x00\x3a\xc8\x7c\x81\x85\x00\x01\x00\x00\x00\x00"),
	  1, 5, 0 },
	{ PROTO_DNS, C, B("\x00\x39\xc8\x7c\x85\x80\x00\x01\x00\x01\x00\x00"),
	  0, 0, 0 },
	{ PROTO_DNS, C, B("\x00\x35\xc8\x7c\x01\x20\x00\x01\x00\x00\x00\x00"),
	  UNKNOWN, NO_STATUS, 0 },
	/* ZooKeeper (zkCli's traffic): no node is an answer; no auth fails;
	 * the connect response has no reply header */
	{ PROTO_ZOOKEEPER, C,
	  B("\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\xff\x9b"),
	  0, -101, 0 },
	{ PROTO_ZOOKEEPER, S,
	  B("\x00\x00\x00\x10\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x05\xff\xff\xff\x9a"),
	  1, -102, 0 },
	{ PROTO_ZOOKEEPER, S,
	  B("\x00\x00\x00\x16\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00"),
	  0, 0, 0 },
	{ PROTO_ZOOKEEPER, C,
	  B("\x00\x00\x00\x25\x00\x00\x00\x00\x00\x00\x27\x10\x01\x00\x00\xc4\x48\xa8\x00\x00\x00\x00\x00\x10"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_ZOOKEEPER, C,
	  B("\x00\x00\x00\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00"),
	  UNKNOWN, NO_STATUS, 0 },
	/* MQTT: CONNACK 3.1.1 and 5; PUBACK short and with a reason code */
	{ PROTO_MQTT, C, B("\x20\x02\x00\x00"), 0, 0, 0 },
	{ PROTO_MQTT, S, B("\x20\x02\x00\x05"), 1, 5, 0 },
	{ PROTO_MQTT, C, B("\x20\x03\x00\x87\x00"), 1, 0x87, 0 },
	{ PROTO_MQTT, C, B("\x40\x02\x00\x01"), 0, NO_STATUS, 0 },
	{ PROTO_MQTT, C, B("\x40\x04\x00\x01\x80\x00"), 1, 0x80, 0 },
	{ PROTO_MQTT, C, B("\xd0\x00"), 0, NO_STATUS, 0 },
	{ PROTO_MQTT, C,
	  B("\x30\x08\x00\x01t"
	    "hello"),
	  UNKNOWN, NO_STATUS, 0 },
	/* not decoded */
	{ PROTO_KAFKA, C,
	  B("\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x03\x00\x00\x00\x00"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_AMQP, C, B("\x01\x00\x00\x00\x00\x00\x04\x00\x0a\x00\x0a"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_TLS, C, B("\x16\x03\x03\x00\x5a\x02\x00\x00\x56\x03\x03"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_SSH, C, B("SSH-2.0-OpenSSH_9.2p1\r\n"), UNKNOWN, NO_STATUS, 0 },
	{ PROTO_UNKNOWN, C, B("HTTP/1.1 500 Internal Server Error\r\n"),
	  UNKNOWN, NO_STATUS, 0 },
	{ PROTO_NR, C, B("HTTP/1.1 500 Internal Server Error\r\n"), UNKNOWN, -1,
	  0 },
};

/* The stream of the first HEADERS frame in b, 0 if none: the stream
 * of the request these heads answer (the kernel takes it from the
 * request head, outcome_h2_request_stream). */
static __u32 headers_stream(const void *p, size_t len)
{
	const __u8 *b = p;

	for (size_t off = 0; off + 9 <= len;
	     off += 9 + (b[off] << 16 | b[off + 1] << 8 | b[off + 2]))
		if (b[off + 3] == 1)
			return (__u32)(b[off + 5] & 0x7f) << 24 |
			       b[off + 6] << 16 | b[off + 7] << 8 | b[off + 8];
	return 0;
}

/* Classifies the first len bytes of w's head in a buffer whose rest
 * holds fill. */
static void classify(struct outcome *o, const struct want *w, size_t len,
		     int fill)
{
	__u8 buf[OUTCOME_RESP_HEAD];

	memset(buf, fill, sizeof(buf));
	memcpy(buf, w->b, len < sizeof(buf) ? len : sizeof(buf));
	outcome_classify(o, w->proto, w->side, buf, len,
			 headers_stream(w->b, w->len));
}

static int same(const struct outcome *a, const struct outcome *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* The head the kernel would capture of message m. */
static void classify_msg(struct outcome *o, int proto, int side,
			 const struct fixture_msg *m)
{
	size_t len = m->caplen < OUTCOME_RESP_HEAD ? m->caplen :
						     OUTCOME_RESP_HEAD;

	outcome_classify(o, proto, side, m->b, len,
			 headers_stream(m->b, m->caplen));
}

/* Whether o is what w wants. */
static int as_wanted(const struct outcome *o, const struct want *w)
{
	if (w->error == UNKNOWN)
		return !o->known;
	if (!o->known || o->error != w->error ||
	    o->status_class != w->status_class)
		return 0;
	if (w->status == NO_STATUS)
		return !o->has_status;
	return o->has_status && (__s32)o->status == w->status;
}

static void check_want(const struct want *w, size_t i)
{
	struct outcome o;

	classify(&o, w, w->len, 0);
	if (!as_wanted(&o, w))
		fprintf(stderr,
			"wants[%zu]: proto %d side %d: known %d error %d "
			"status %d (has %d) class %d\n",
			i, w->proto, w->side, o.known, o.error, (__s32)o.status,
			o.has_status, o.status_class);
	CHECK(as_wanted(&o, w));
}

/* Every prefix gives unknown or the whole head's answer; noise past the
 * length changes nothing. */
static void check_prefixes(const struct want *w)
{
	struct outcome whole, part, noisy;

	classify(&whole, w, w->len, 0);
	for (size_t len = 0; len <= w->len; len++) {
		classify(&part, w, len, 0);
		if (part.known && !same(&part, &whole))
			fprintf(stderr,
				"proto %d prefix %zu of %zu: status %u\n",
				w->proto, len, w->len, part.status);
		CHECK(!part.known || same(&part, &whole));
		for (int fill = 1; fill < 256; fill += 17) {
			classify(&noisy, w, len, fill);
			CHECK(same(&noisy, &part));
		}
	}
}

/* A fixture's server messages (real traffic) under its own protocol:
 * none is a failure, and at least want_known are decoded. */
static void check_fixture(const char *name, int proto, int want_known)
{
	static struct fixture f;
	char path[256];
	int known = 0;

	snprintf(path, sizeof(path), "tests/unit/protocol/%s.txt", name);
	CHECK(fixture_load(path, &f));
	for (size_t i = 0; i < f.n; i++) {
		struct outcome o;

		if (f.m[i].from != 'S')
			continue;
		classify_msg(&o, proto, TCP_SIDE_CLIENT, &f.m[i]);
		CHECK(!o.error);
		known += o.known;
	}
	if (known < want_known)
		fprintf(stderr, "%s: %d known, want %d\n", name, known,
			want_known);
	CHECK(known >= want_known);
}

/* Replies of real servers to real clients whose outcome is known
 * (tests/unit/outcome, each file says how it was made): message msg. */
static const struct captured {
	const char *name;
	size_t msg;
	int proto, side, error;
	long status;
} captured[] = {
	{ "http_nginx_status", 1, PROTO_HTTP, S, 0, 200 },
	{ "http_nginx_status", 3, PROTO_HTTP, S, 0, 404 },
	{ "http_nginx_status", 3, PROTO_HTTP, C, 1, 404 },
	{ "http_nginx_status", 5, PROTO_HTTP, S, 1, 500 },
	/* nginx's first HTTP/2 response: HEADERS past the head */
	{ "http2_nginx_status", 1, PROTO_HTTP2, C, UNKNOWN, NO_STATUS },
	{ "redis_cli_errors", 1, PROTO_REDIS, C, 0, NO_STATUS },
	{ "redis_cli_errors", 6, PROTO_REDIS, C, 0, NO_STATUS },
	{ "redis_cli_errors", 8, PROTO_REDIS, S, 1, NO_STATUS },
	{ "redis_cli_errors", 10, PROTO_REDIS, C, 1, NO_STATUS },
	{ "postgresql_psql_syntax", 1, PROTO_POSTGRESQL, C, 0, NO_STATUS },
	{ "postgresql_psql_syntax", 3, PROTO_POSTGRESQL, C, 1, NO_STATUS },
	{ "postgresql_psql_unique", 3, PROTO_POSTGRESQL, S, 1, NO_STATUS },
	{ "mysql_mariadb_errors", 2, PROTO_MYSQL, C, 0, NO_STATUS },
	{ "mysql_mariadb_errors", 4, PROTO_MYSQL, C, 1, 1064 },
	{ "mysql_mariadb_nosuch", 4, PROTO_MYSQL, S, 0, NO_STATUS },
	{ "mysql_mariadb_nosuch", 6, PROTO_MYSQL, S, 1, 1146 },
	{ "memcached_memccat_miss", 1, PROTO_MEMCACHED, S, 0, NO_STATUS },
	{ "memcached_memccat_binary_miss", 1, PROTO_MEMCACHED, C, 0, 1 },
	{ "memcached_memccat_binary_miss", 3, PROTO_MEMCACHED, C, 0, 0 },
	{ "dns_dig_nx", 1, PROTO_DNS, C, 0, 3 },
	{ "dns_dig_refused", 1, PROTO_DNS, S, 1, 5 },
	{ "dns_dig_ok", 1, PROTO_DNS, C, 0, 0 },
};

static void check_captured(const struct captured *c)
{
	static struct fixture f;
	struct want w = { .proto = c->proto,
			  .side = c->side,
			  .error = c->error,
			  .status = c->status };
	char path[256];
	struct outcome o;

	snprintf(path, sizeof(path), "tests/unit/outcome/%s.txt", c->name);
	if (!fixture_load(path, &f) || c->msg >= f.n ||
	    f.m[c->msg].from != 'S') {
		fprintf(stderr, "%s: no server message %zu\n", path, c->msg);
		CHECK(0);
		return;
	}
	if (c->proto == PROTO_HTTP || c->proto == PROTO_HTTP2)
		w.status_class = c->status / 100;
	classify_msg(&o, c->proto, c->side, &f.m[c->msg]);
	if (!as_wanted(&o, &w))
		fprintf(stderr,
			"%s message %zu: known %d error %d status %d (has %d)\n",
			c->name, c->msg, o.known, o.error, (__s32)o.status,
			o.has_status);
	CHECK(as_wanted(&o, &w));
}

/* The stream a request head opens, and a response's HEADERS on any
 * other stream (or with the stream unknown) read as unknown. */
static void check_streams(void)
{
	static const char curl_head[] =
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		"\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64"
		"\x00\x04\x02\x00\x00\x00\x00\x02\x00\x00\x00\x00"
		"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x01\xff\x00\x01"
		"\x00\x00\x1f\x01\x05\x00\x00\x00\x01\x82\x85";
	static const char later[] =
		"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x01\xff\x00\x01"
		"\x00\x00\x1f\x01\x05\x00\x00\x01\x07\x82\x85";
	static const char data_first[] =
		"\x00\x00\x02\x00\x00\x00\x00\x00\x01hi"
		"\x00\x00\x1f\x01\x05\x00\x00\x00\x03\x82\x85";
	static const __u8 resp[] = "\x00\x00\x01\x01\x04\x00\x00\x00\x03\x8d";
	__u8 head[OUTCOME_REQ_HEAD];
	struct outcome o;

	CHECK(outcome_h2_request_stream((const __u8 *)curl_head,
					sizeof(curl_head) - 1) == 1);
	/* the HEADERS' frame header cut by the head */
	CHECK(outcome_h2_request_stream((const __u8 *)curl_head, 70) == 0);
	CHECK(outcome_h2_request_stream((const __u8 *)later,
					sizeof(later) - 1) == 0x107);
	CHECK(outcome_h2_request_stream((const __u8 *)data_first,
					sizeof(data_first) - 1) == 0);
	/* bytes past the length are not read */
	memset(head, 0, sizeof(head));
	memcpy(head, later, sizeof(later) - 1);
	CHECK(outcome_h2_request_stream(head, 13) == 0);
	outcome_classify(&o, PROTO_HTTP2, S, resp, sizeof(resp) - 1, 3);
	CHECK(o.known && o.status == 404);
	outcome_classify(&o, PROTO_HTTP2, S, resp, sizeof(resp) - 1, 1);
	CHECK(!o.known && !o.has_status);
	outcome_classify(&o, PROTO_HTTP2, S, resp, sizeof(resp) - 1, 0);
	CHECK(!o.known && !o.has_status);
}

int main(void)
{
	check_streams();
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		check_want(&wants[i], i);
		check_prefixes(&wants[i]);
	}
	check_fixture("http_curl", PROTO_HTTP, 1);
	check_fixture("redis_cli", PROTO_REDIS, 1);
	check_fixture("redis_cli_resp3", PROTO_REDIS, 1);
	check_fixture("memcached_memcslap", PROTO_MEMCACHED, 1);
	check_fixture("memcached_binary", PROTO_MEMCACHED, 1);
	check_fixture("dns_dig_tcp", PROTO_DNS, 1);
	check_fixture("zookeeper_zkcli", PROTO_ZOOKEEPER, 1);
	check_fixture("zookeeper_kazoo", PROTO_ZOOKEEPER, 1);
	check_fixture("mqtt_mosquitto_pub", PROTO_MQTT, 1);
	check_fixture("postgresql_pgbench_init", PROTO_POSTGRESQL, 1);
	check_fixture("mysql_mariadb_client", PROTO_MYSQL, 1);
	for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++)
		check_captured(&captured[i]);
	return unit_done("outcome");
}
