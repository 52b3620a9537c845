// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a request's record says of its outcome: the classifier's verdict
 * with each protocol's status (number or word), HTTP's method and raw
 * path (absent when the request line runs past the head), HTTP/2's
 * :method, :path and grpc-status where they are plain, and unknown
 * where the request head shows two requests kmond counted as one. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collectors/tcp/request_http.h"
#include "collectors/tcp/request_outcome.h"
#include "fixture.h"
#include "unit.h"

#define S TCP_SIDE_SERVER
#define C TCP_SIDE_CLIENT

/* A literal and its length (the heads hold NULs). */
#define B(s) (const uint8_t *)(s), sizeof(s) - 1

static struct request_outcome out;

/* Decodes a request whose heads are all it sent and received. */
static void decode(int proto, int side, const uint8_t *req, size_t req_len,
		   const uint8_t *resp, size_t resp_len)
{
	request_outcome__decode(&out, proto, side, req, req_len, req_len, resp,
				resp_len, resp_len, false);
}

static void check_http(void)
{
	static const char get[] = "GET /api/v1/users/12345?x=1 HTTP/1.1\r\n"
				  "Host: a\r\n\r\n";
	static const char resp[] = "HTTP/1.1 404 Not Found\r\nServer: x\r\n";

	decode(PROTO_HTTP, S, B(get), B(resp));
	CHECK(out.known && !out.error && out.has_status && !out.status_is_str);
	CHECK(out.status_num == 404);
	CHECK(out.has_method && out.has_path);
	CHECK_STR(out.method, "GET");
	CHECK_STR(out.path, "/api/v1/users/12345?x=1");
	decode(PROTO_HTTP, C, B(get), B(resp));
	CHECK(out.known && out.error && out.status_num == 404);

	/* the request line runs past the head: no path, never a cut one */
	request_outcome__decode(&out, PROTO_HTTP, S,
				B("GET /a/very/long/path/that/the/head/cuts"),
				400, B(resp), 100, false);
	CHECK(out.has_method && !out.has_path);
	CHECK(out.known); /* the head does not show a second request */

	/* two GETs in one: the response answers the first only */
	decode(PROTO_HTTP, S,
	       B("GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
		 "GET /b HTTP/1.1\r\nHost: a\r\n\r\n"),
	       B(resp));
	CHECK(!out.known && !out.error && !out.has_status);
	CHECK(out.has_method && out.has_path);
	CHECK_STR(out.path, "/a");

	/* line ends found a word at a time: a CRLF that begins a word
	 * (byte 16), a CR alone (21), a CRLF across two words (23-24), the
	 * blank line in the last, partial word (34); then the same request
	 * with more bytes after it, and one followed by another */
	static const char edges[] = "GET /ab HTTP/1.1\r\nX: \r1\r\n"
				    "Y: 0123\r\n\r\n";
	decode(PROTO_HTTP, S, B(edges), B(resp));
	CHECK(out.known && out.status_num == 404);
	request_outcome__decode(&out, PROTO_HTTP, S, B(edges),
				sizeof(edges) + 10, B(resp), 40, false);
	CHECK(!out.known);
	decode(PROTO_HTTP, S, B("GET / HTTP/1.0\r\nA: 1234567\r\n\r\nGET"),
	       B(resp));
	CHECK(!out.known);

	/* a body of Content-Length: whole, then with a request after it */
	static const char post[] = "POST /o HTTP/1.1\r\nContent-Length: 5\r\n"
				   "\r\nhello";
	request_outcome__decode(&out, PROTO_HTTP, S, B(post), sizeof(post) - 1,
				B("HTTP/1.1 500 Internal Server Error\r\n"), 36,
				false);
	CHECK(out.known && out.error && out.status_num == 500);
	CHECK_STR(out.method, "POST");
	request_outcome__decode(&out, PROTO_HTTP, S, B(post), sizeof(post) + 40,
				B("HTTP/1.1 500 Internal Server Error\r\n"), 36,
				false);
	CHECK(!out.known);
	/* chunked: the head cannot show the body's end */
	request_outcome__decode(
		&out, PROTO_HTTP, S,
		B("POST /o HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n"),
		300, B("HTTP/1.1 200 OK\r\n"), 17, false);
	CHECK(out.known && !out.error && out.status_num == 200);
}

/* The answer of another stream is no status of this request: stream 1
 * asked (curl), stream 3 answered; a request head opening two streams
 * (requests in flight) is two requests kmond counted as one. */
static void check_http2_streams(const uint8_t *curl)
{
	static const uint8_t two[] = "\x00\x00\x01\x01\x05\x00\x00\x00\x03\x82"
				     "\x00\x00\x01\x01\x05\x00\x00\x00\x05\x82";
	static const uint8_t on3[] = "\x00\x00\x10\x01\x05\x00\x00\x00\x03"
				     "\x88\x40\x0bgrpc-status\x01"
				     "5";
	/* the server's SETTINGS first, then stream 1's 500 */
	static const uint8_t late[] =
		"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
		"\x00\x00\x01\x01\x04\x00\x00\x00\x01\x8e";

	request_outcome__decode(&out, PROTO_HTTP2, C, curl, 96, 104, B(on3), 19,
				false);
	CHECK(!out.known && !out.has_status && !out.has_grpc);
	CHECK(out.has_method); /* the request's own */
	request_outcome__decode(&out, PROTO_HTTP2, S, curl, 96, 104, B(late),
				19, false);
	CHECK(out.known && out.error && out.status_num == 500);
	/* no HEADERS in the request head: its stream is not known */
	request_outcome__decode(&out, PROTO_HTTP2, S, curl, 60, 104, B(late),
				19, false);
	CHECK(!out.known && !out.has_status);
	decode(PROTO_HTTP2, S, B(two),
	       B("\x00\x00\x01\x01\x04\x00\x00\x00\x03\x88"));
	CHECK(!out.known && !out.has_status);
	CHECK(request_http2__streams(two, sizeof(two) - 1) == 2);
	CHECK(request_http2__streams(curl, 96) == 1);
	CHECK(request_http2__streams(curl, 60) == 0);
}

static void check_http2(void)
{
	/* curl's first flight: the preface, SETTINGS, WINDOW_UPDATE, then
	 * HEADERS with 0x82 (GET) and 0x85 (:path /index.html) */
	static const uint8_t curl[] =
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		"\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64"
		"\x00\x04\x02\x00\x00\x00\x00\x02\x00\x00\x00\x00"
		"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x01\xff\x00\x01"
		"\x00\x00\x1f\x01\x05\x00\x00\x00\x01\x82\x85\x86\x41\x8b\x08"
		"\x9d\x5c\x0b\x81\x70\xdc\x64\x20\x03\x3f\x7a\x88\x25\xb6\x50"
		"\xc3\xab\xbc\xf2\xe1\x53\x03\x2a\x2f\x2a";
	/* a literal :path (name 4, not indexed, plain) and POST */
	static const uint8_t post[] = "\x00\x00\x10\x01\x05\x00\x00\x00\x03"
				      "\x83\x04\x0c/api/v1/a/42\x86";
	/* :status 200, then grpc-status 5 as a plain literal */
	static const uint8_t grpc[] = "\x00\x00\x10\x01\x05\x00\x00\x00\x03"
				      "\x88\x40\x0bgrpc-status\x01"
				      "5";

	request_outcome__decode(&out, PROTO_HTTP2, C, curl, 96, 104,
				B("\x00\x00\x01\x01\x04\x00\x00\x00\x01\x8d"),
				10, false);
	CHECK(out.known && out.error && out.status_num == 404);
	CHECK(out.has_method && out.has_path);
	CHECK_STR(out.method, "GET");
	CHECK_STR(out.path, "/index.html");

	decode(PROTO_HTTP2, S, B(post), B(grpc));
	CHECK(out.known && !out.error && out.status_num == 200);
	CHECK_STR(out.method, "POST");
	CHECK_STR(out.path, "/api/v1/a/42");
	CHECK(out.has_grpc && out.grpc_status == 5);
	/* the value cut by the head: no grpc-status */
	decode(PROTO_HTTP2, S, B(post), grpc, sizeof(grpc) - 2);
	CHECK(!out.has_grpc);
	check_http2_streams(curl);
}

/* On a gRPC connection the outcome is the grpc-status (OpenTelemetry: a
 * server's NOT_FOUND is its caller's failure, INTERNAL its own; a
 * client's call failed on any but OK), unknown without one unless the
 * :status says the call failed; the counts' classification says the
 * same as the record. */
static void check_grpc(void)
{
	/* HEADERS on stream 3, POST and :path /k.T/M (plain) */
	static const uint8_t req[] = "\x00\x00\x0a\x01\x04\x00\x00\x00\x03"
				     "\x83\x04\x06/k.T/M\x86";
	/* trailers-only answers: :status 200 and grpc-status 5, and 13 */
	static const uint8_t nf[] = "\x00\x00\x10\x01\x05\x00\x00\x00\x03"
				    "\x88\x40\x0bgrpc-status\x01"
				    "5";
	static const uint8_t internal[] = "\x00\x00\x11\x01\x05\x00\x00\x00\x03"
					  "\x88\x40\x0bgrpc-status\x02"
					  "13";
	/* :status 200 and nothing more read; a proxy's 503 */
	static const uint8_t ok[] = "\x00\x00\x01\x01\x04\x00\x00\x00\x03\x88";
	static const uint8_t unavailable[] =
		"\x00\x00\x05\x01\x04\x00\x00\x00\x03\x08\x03"
		"503";
	struct outcome o;

	request_outcome__decode(&out, PROTO_HTTP2, S, B(req), sizeof(req) - 1,
				B(nf), sizeof(nf) - 1, true);
	CHECK(out.known && !out.error && out.has_grpc && out.grpc_status == 5);
	CHECK(out.status_num == 200);
	request_outcome__decode(&out, PROTO_HTTP2, C, B(req), sizeof(req) - 1,
				B(nf), sizeof(nf) - 1, true);
	CHECK(out.known && out.error);
	request_outcome__decode(&out, PROTO_HTTP2, S, B(req), sizeof(req) - 1,
				B(internal), sizeof(internal) - 1, true);
	CHECK(out.known && out.error && out.grpc_status == 13);
	/* not known to be gRPC: HTTP's rule */
	request_outcome__decode(&out, PROTO_HTTP2, S, B(req), sizeof(req) - 1,
				B(internal), sizeof(internal) - 1, false);
	CHECK(out.known && !out.error);
	/* a 200 without its grpc-status: the status, no outcome */
	request_outcome__decode(&out, PROTO_HTTP2, S, B(req), sizeof(req) - 1,
				B(ok), sizeof(ok) - 1, true);
	CHECK(!out.known && !out.error && out.has_status &&
	      out.status_num == 200);
	request_outcome__decode(&out, PROTO_HTTP2, S, B(req), sizeof(req) - 1,
				B(unavailable), sizeof(unavailable) - 1, true);
	CHECK(out.known && out.error && out.status_num == 503);
	/* the counts' classification of the same heads */
	request_outcome__classify(&o, PROTO_HTTP2, S, nf, sizeof(nf) - 1, 3,
				  true);
	CHECK(o.known && !o.error);
	request_outcome__classify(&o, PROTO_HTTP2, S, internal,
				  sizeof(internal) - 1, 3, true);
	CHECK(o.known && o.error);
	request_outcome__classify(&o, PROTO_HTTP2, S, ok, sizeof(ok) - 1, 3,
				  true);
	CHECK(!o.known);
}

static void check_redis(void)
{
	static const char get[] = "*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n";
	static const char set[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1000\r\n";

	decode(PROTO_REDIS, S, B(get),
	       B("-WRONGTYPE Operation against a key holding the wrong kind "
		 "of value\r\n"));
	CHECK(out.known && out.error && out.status_is_str);
	CHECK_STR(out.status_str, "WRONGTYPE");
	decode(PROTO_REDIS, C, B("*1\r\n$3\r\nFOO\r\n"),
	       B("-ERR unknown command 'FOO', with args beginning with: \r\n"));
	CHECK_STR(out.status_str, "ERR");
	decode(PROTO_REDIS, C, B(get), B("!21\r\nSYNTAX invalid syntax\r\n"));
	CHECK(out.error);
	CHECK_STR(out.status_str, "SYNTAX");
	decode(PROTO_REDIS, C, B(get), B("$3\r\nbar\r\n"));
	CHECK(out.known && !out.error && !out.has_status);

	/* pipelined: two GETs counted as one request */
	request_outcome__decode(&out, PROTO_REDIS, C, B(get), 2 * 22,
				B("$3\r\nbar\r\n"), 9, false);
	CHECK(!out.known);
	/* a large SET: 1031 bytes by its bulk headers, alone or not */
	request_outcome__decode(&out, PROTO_REDIS, C, B(set), 1031,
				B("+OK\r\n"), 5, false);
	CHECK(out.known && !out.error);
	request_outcome__decode(&out, PROTO_REDIS, C, B(set), 1031 + 22,
				B("+OK\r\n"), 5, false);
	CHECK(!out.known);
	/* inline commands */
	request_outcome__decode(&out, PROTO_REDIS, C, B("PING\r\nPING\r\n"), 12,
				B("+PONG\r\n"), 7, false);
	CHECK(!out.known);
	request_outcome__decode(&out, PROTO_REDIS, C, B("PING\r\n"), 6,
				B("+PONG\r\n"), 7, false);
	CHECK(out.known);
}

static void check_databases(void)
{
	decode(PROTO_POSTGRESQL, C, B("Q\x00\x00\x00\x0aselec\0"),
	       B("E\x00\x00\x00\x5bSERROR\0VERROR\0C42601\0Msyntax error"));
	CHECK(out.known && out.error && out.status_is_str);
	CHECK_STR(out.status_str, "42601");
	decode(PROTO_POSTGRESQL, S, B("P\x00\x00\x00\x04"),
	       B("1\x00\x00\x00\x04"
		 "2\x00\x00\x00\x04"
		 "E\x00\x00\x00\x60SERROR\0VERROR\0C23505\0Mduplicate"));
	CHECK(out.error);
	CHECK_STR(out.status_str, "23505");
	/* the field cut by the head: error, no SQLSTATE */
	decode(PROTO_POSTGRESQL, S, B("P"),
	       B("E\x00\x00\x00\x5bSERROR\0VERROR\0C426"));
	CHECK(out.known && out.error && !out.has_status);
	decode(PROTO_POSTGRESQL, S, B("P"), B("C\x00\x00\x00\x0dSELECT 1\0"));
	CHECK(out.known && !out.error && !out.has_status);

	decode(PROTO_MYSQL, C, B("\x09\x00\x00\x00\x03selec 1"),
	       B("\xa2\x00\x00\x01\xff\x28\x04#42000You have an error"));
	CHECK(out.known && out.error && !out.status_is_str);
	CHECK(out.status_num == 1064);
	decode(PROTO_MYSQL, C, B("\x09\x00\x00\x00\x03select 1"),
	       B("\x07\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00"));
	CHECK(out.known && !out.error && !out.has_status);

	decode(PROTO_ZOOKEEPER, C, B("\x00\x00\x00\x0f"),
	       B("\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
		 "\x01\xff\xff\xff\x9b"));
	CHECK(out.known && !out.error && out.status_num == -101);
}

static void check_memcached_dns(void)
{
	decode(PROTO_MEMCACHED, S, B("get foo\r\n"), B("NOT_FOUND\r\n"));
	CHECK(out.known && !out.error);
	CHECK_STR(out.status_str, "NOT_FOUND");
	decode(PROTO_MEMCACHED, S, B("set foo 0 0 1\r\nx\r\n"),
	       B("SERVER_ERROR out of memory storing object\r\n"));
	CHECK(out.known && out.error);
	CHECK_STR(out.status_str, "SERVER_ERROR");
	decode(PROTO_MEMCACHED, S, B("incr n 1\r\n"), B("43\r\n"));
	CHECK(out.known && !out.error && !out.has_status);
	decode(PROTO_MEMCACHED, C, B("\x80\x00"),
	       B("\x81\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x09"));
	CHECK(out.known && !out.error);
	CHECK_STR(out.status_str, "NOT_FOUND");

	decode(PROTO_DNS, C, B("\x00\x35\xc8\x7c\x01\x20"),
	       B("\x00\x3a\xc8\x7c\x81\x83\x00\x01\x00\x00\x00\x01"));
	CHECK(out.known && !out.error);
	CHECK_STR(out.status_str, "NXDOMAIN");
	decode(PROTO_DNS, C, B("\x00\x35\xc8\x7c\x01\x20"),
	       B("\x00\x3a\xc8\x7c\x81\x82\x00\x01\x00\x00\x00\x00"));
	CHECK(out.known && out.error);
	CHECK_STR(out.status_str, "SERVFAIL");
	decode(PROTO_DNS, C, B("\x00\x35\xc8\x7c\x01\x20"),
	       B("\x00\x3a\xc8\x7c\x81\x8c\x00\x01\x00\x00\x00\x00"));
	CHECK_STR(out.status_str, "12");
}

static void check_unknown(void)
{
	decode(PROTO_TLS, C, B("\x16\x03\x01"), B("\x16\x03\x03\x00\x5a"));
	CHECK(!out.known && !out.error && !out.has_status);
	decode(PROTO_KAFKA, C, B("\x00\x00\x00\x10"),
	       B("\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x03"));
	CHECK(!out.known && !out.has_status);
	decode(PROTO_HTTP, S, B("GET / HTTP/1.1\r\n\r\n"), B(""));
	CHECK(!out.known && out.has_path);
}

/* Real servers' replies to Debian's clients (tests/unit/outcome): the
 * status each record would carry, decoded with the request before it. */
static const struct captured {
	const char *name;
	size_t msg; /* the reply; its request is the client's message before */
	int proto, side;
	const char *status; /* a word, a number as text, or NULL: none */
	const char *method, *path;
} captured[] = {
	{ "http_nginx_status", 3, PROTO_HTTP, S, "404", "GET", "/missing" },
	{ "http_nginx_status", 5, PROTO_HTTP, C, "500", "GET", "/boom" },
	{ "redis_cli_errors", 8, PROTO_REDIS, S, "WRONGTYPE" },
	{ "redis_cli_errors", 10, PROTO_REDIS, C, "ERR" },
	{ "redis_cli_errors", 6, PROTO_REDIS, C, NULL },
	{ "postgresql_psql_syntax", 3, PROTO_POSTGRESQL, C, "42601" },
	{ "postgresql_psql_unique", 3, PROTO_POSTGRESQL, S, "23505" },
	{ "mysql_mariadb_errors", 4, PROTO_MYSQL, C, "1064" },
	{ "mysql_mariadb_nosuch", 6, PROTO_MYSQL, S, "1146" },
	{ "mysql_mariadb_nosuch", 4, PROTO_MYSQL, S, NULL },
	{ "memcached_memccat_miss", 1, PROTO_MEMCACHED, S, "END" },
	{ "memcached_memccat_binary_miss", 1, PROTO_MEMCACHED, C, "NOT_FOUND" },
	{ "dns_dig_nx", 1, PROTO_DNS, C, "NXDOMAIN" },
	{ "dns_dig_refused", 1, PROTO_DNS, S, "REFUSED" },
	{ "dns_dig_ok", 1, PROTO_DNS, C, "NOERROR" },
};

/* The status as text, or NULL. */
static const char *status_text(char *buf, size_t size)
{
	if (!out.has_status)
		return NULL;
	if (out.status_is_str)
		return out.status_str;
	snprintf(buf, size, "%ld", out.status_num);
	return buf;
}

static void check_captured(const struct captured *c)
{
	static struct fixture f;
	const struct fixture_msg *req = NULL, *resp;
	char path[256], num[24];
	const char *got;

	snprintf(path, sizeof(path), "tests/unit/outcome/%s.txt", c->name);
	CHECK(fixture_load(path, &f) && c->msg < f.n);
	if (c->msg >= f.n)
		return;
	resp = &f.m[c->msg];
	for (size_t i = 0; i < c->msg; i++)
		if (f.m[i].from == 'C')
			req = &f.m[i];
	CHECK(req != NULL && resp->from == 'S');
	if (!req)
		return;
	request_outcome__decode(
		&out, c->proto, c->side, req->b,
		req->caplen < OUTCOME_REQ_HEAD ? req->caplen : OUTCOME_REQ_HEAD,
		req->len, resp->b,
		resp->caplen < OUTCOME_RESP_HEAD ? resp->caplen :
						   OUTCOME_RESP_HEAD,
		resp->len, false);
	got = status_text(num, sizeof(num));
	CHECK(out.known);
	if (c->status)
		CHECK_STR(got, c->status);
	else
		CHECK(got == NULL);
	if (c->method) {
		CHECK_STR(out.has_method ? out.method : NULL, c->method);
		CHECK_STR(out.has_path ? out.path : NULL, c->path);
	}
}

int main(void)
{
	check_http();
	check_http2();
	check_grpc();
	check_redis();
	check_databases();
	check_memcached_dns();
	check_unknown();
	for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++)
		check_captured(&captured[i]);
	return unit_done("request_outcome");
}
