// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Application protocol identification (see protocol.h).
 *
 * Each direction's messages are joined into a stream prefix: a request
 * split over several writes reads as one, and pipelined requests follow
 * each other. The join stops at the first message captured only in part,
 * since what follows it is not its continuation.
 *
 * Every protocol has a check of the client's stream (does it start like
 * this protocol's first request?) and of the server's (does it start like
 * the answer to that request?); checks answer no, yes, or "more bytes
 * needed". The checks look at structure (lengths that agree with the
 * message, ids echoed by the answer, fixed magic) rather than at single
 * bytes, so that random and foreign binary data fails them. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/array.h"
#include "lib/protocol.h"

/* Longest stream prefix kept per direction. */
#define STREAM_MAX 1024

enum { NO, MORE, YES };

struct stream {
	uint8_t b[STREAM_MAX];
	size_t n;
	/* The stream continues beyond b (a message captured in part, or a
	 * full buffer): running out of bytes is the capture's limit, not the
	 * end of what was sent. */
	bool cut;
	uint32_t first_len; /* full length of its first message */
	size_t nmsgs;
};

static const char *const names[PROTO_NR] = {
	[PROTO_UNKNOWN] = "unknown", [PROTO_HTTP] = "http",
	[PROTO_HTTP2] = "http2",     [PROTO_TLS] = "tls",
	[PROTO_REDIS] = "redis",     [PROTO_POSTGRESQL] = "postgresql",
	[PROTO_MYSQL] = "mysql",     [PROTO_MEMCACHED] = "memcached",
	[PROTO_KAFKA] = "kafka",     [PROTO_MQTT] = "mqtt",
	[PROTO_AMQP] = "amqp",	     [PROTO_DNS] = "dns",
	[PROTO_SSH] = "ssh",	     [PROTO_ZOOKEEPER] = "zookeeper",
};

const char *protocol__name(int proto)
{
	if (proto < 0 || proto >= PROTO_NR || !names[proto])
		return "unknown";
	return names[proto];
}

/* --- reading --- */

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le24(const uint8_t *p)
{
	return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* What to answer when a check needs byte `need` and the stream ends
 * before it: wait for more, unless the capture cut it (then the evidence
 * so far is all there will be, and `cut_answer` says what it is worth). */
static int short_of(const struct stream *s, int cut_answer)
{
	return s->cut ? cut_answer : MORE;
}

/* Whether s starts with lit; MORE when s is a shorter prefix of it. */
static int starts(const struct stream *s, const char *lit)
{
	size_t n = strlen(lit), m = s->n < n ? s->n : n;

	if (memcmp(s->b, lit, m))
		return NO;
	return m == n ? YES : short_of(s, NO);
}

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_print(uint8_t c)
{
	return c >= 0x20 && c < 0x7f;
}

/* Digits at s->b[*i] up to "\r\n" (an optional leading '-' when sign);
 * *i moves past the CRLF. */
static int crlf_number(const struct stream *s, size_t *i, bool sign)
{
	size_t start = *i, digits = 0;

	if (sign && *i < s->n && s->b[*i] == '-')
		(*i)++;
	for (; *i < s->n && is_digit(s->b[*i]); (*i)++)
		if (++digits > 19)
			return NO;
	if (*i + 2 > s->n)
		return *i - start > 20 ? NO : short_of(s, digits ? YES : NO);
	if (!digits || s->b[*i] != '\r' || s->b[*i + 1] != '\n')
		return NO;
	*i += 2;
	return YES;
}

/* A printable line up to "\r\n" at s->b[i]. */
static int crlf_line(const struct stream *s, size_t i)
{
	for (; i < s->n; i++) {
		if (s->b[i] == '\r')
			return i + 1 < s->n ? (s->b[i + 1] == '\n' ? YES : NO) :
					      short_of(s, YES);
		if (!is_print(s->b[i]))
			return NO;
	}
	return short_of(s, YES);
}

/* --- HTTP/1.x --- */

static const char *const http_methods[] = {
	"GET",	 "POST",    "PUT",   "DELETE",	 "HEAD",      "OPTIONS",
	"PATCH", "CONNECT", "TRACE", "PROPFIND", "PROPPATCH", "MKCOL",
	"COPY",	 "MOVE",    "LOCK",  "UNLOCK",	 "REPORT",    "SEARCH",
};

/* METHOD SP target SP HTTP/1.x CRLF; a target longer than the capture
 * is fine once the method and the target's start are seen. */
static int http_client(const struct stream *s, const struct stream *srv)
{
	size_t i, m;
	int r = NO;

	(void)srv;
	for (m = 0; m < ARRAY_SIZE(http_methods); m++) {
		size_t len;

		if (s->n && s->b[0] != (uint8_t)http_methods[m][0])
			continue; /* most streams, most methods */
		len = strlen(http_methods[m]);
		if (s->n <= len) {
			if (!memcmp(s->b, http_methods[m], s->n))
				r = short_of(s, NO);
			continue;
		}
		if (!memcmp(s->b, http_methods[m], len) && s->b[len] == ' ')
			break;
	}
	if (m == ARRAY_SIZE(http_methods))
		return r;
	i = strlen(http_methods[m]) + 1;
	if (i >= s->n)
		return short_of(s, NO);
	if (s->b[i] != '/' && s->b[i] != '*' && !is_alpha(s->b[i]) &&
	    !is_digit(s->b[i]))
		return NO;
	for (; i < s->n && s->b[i] != ' '; i++)
		if (s->b[i] <= 0x20 || s->b[i] >= 0x7f)
			return NO;
	if (i == s->n)
		return short_of(s, YES);
	i++;
	for (const char *v = "HTTP/1."; *v; v++, i++) {
		if (i == s->n)
			return short_of(s, YES);
		if (s->b[i] != (uint8_t)*v)
			return NO;
	}
	if (i == s->n)
		return short_of(s, YES);
	return s->b[i] == '0' || s->b[i] == '1' ? YES : NO;
}

static int http_server(const struct stream *s, const struct stream *cli)
{
	int r = starts(s, "HTTP/1.");

	(void)cli;
	if (r != YES)
		return r;
	if (s->n < 13)
		return short_of(s, NO);
	if ((s->b[7] != '0' && s->b[7] != '1') || s->b[8] != ' ' ||
	    !is_digit(s->b[9]) || !is_digit(s->b[10]) || !is_digit(s->b[11]))
		return NO;
	return s->b[12] == ' ' || s->b[12] == '\r' ? YES : NO;
}

/* --- HTTP/2 (prior knowledge; gRPC too) --- */

static int http2_client(const struct stream *s, const struct stream *srv)
{
	(void)srv;
	return starts(s, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
}

/* The server's first frame is SETTINGS on stream 0, 6 bytes a setting. */
static int http2_server(const struct stream *s, const struct stream *cli)
{
	uint32_t len;

	(void)cli;
	if (s->n < 9)
		return short_of(s, NO);
	len = be24(s->b);
	return s->b[3] == 4 && s->b[4] == 0 && be32(s->b + 5) == 0 &&
			       len % 6 == 0 && len <= 16384 ?
		       YES :
		       NO;
}

/* --- TLS --- */

/* A handshake record: type 22, version 3.0-3.4, a length the protocol
 * allows, and the handshake message `hs` whose length fits the record. */
static int tls_handshake(const struct stream *s, uint8_t hs)
{
	uint32_t reclen, hslen;

	if (s->n < 11)
		return short_of(s, NO);
	reclen = be16(s->b + 3);
	hslen = be24(s->b + 6);
	if (s->b[0] != 0x16 || s->b[1] != 3 || s->b[2] > 4 || reclen < 38 ||
	    reclen > 16384 + 2048 || s->b[5] != hs)
		return NO;
	/* A hello longer than its record continues in the next one. */
	if (hslen + 4 < reclen || hslen > 0xffff)
		return NO;
	return s->b[9] == 3 && s->b[10] <= 4 ? YES : NO;
}

static int tls_client(const struct stream *s, const struct stream *srv)
{
	(void)srv;
	return tls_handshake(s, 1); /* ClientHello */
}

static int tls_server(const struct stream *s, const struct stream *cli)
{
	(void)cli;
	/* An alert instead: the server refused the hello. */
	if (s->n >= 7 && s->b[0] == 0x15 && s->b[1] == 3 && s->b[2] <= 4 &&
	    be16(s->b + 3) == 2 && (s->b[5] == 1 || s->b[5] == 2))
		return YES;
	return tls_handshake(s, 2); /* ServerHello */
}

/* The host_name of the server_name extension, when the capture holds it. */
static void tls_sni(const struct stream *s, char *out, size_t outlen)
{
	const uint8_t *b = s->b;
	size_t n = s->n, i = 5 + 4 + 2 + 32, end;

	out[0] = '\0';
	if (i + 1 > n)
		return;
	i += 1 + b[i]; /* session id */
	if (i + 2 > n)
		return;
	i += 2 + be16(b + i); /* cipher suites */
	if (i + 1 > n)
		return;
	i += 1 + b[i]; /* compression methods */
	if (i + 2 > n)
		return;
	end = i + 2 + be16(b + i);
	for (i += 2; i + 4 <= n && i + 4 <= end; i += 4 + be16(b + i + 2)) {
		size_t len;

		if (be16(b + i) != 0) /* server_name */
			continue;
		/* list length (2), name type (1) = host_name, name length */
		if (i + 9 > n || b[i + 6] != 0)
			return;
		len = be16(b + i + 7);
		if (i + 9 + len > n || len >= outlen)
			return;
		for (size_t k = 0; k < len; k++)
			if (!is_print(b[i + 9 + k]))
				return;
		memcpy(out, b + i + 9, len);
		out[len] = '\0';
		return;
	}
}

/* --- PostgreSQL --- */

#define PG_SSL_REQUEST 80877103
#define PG_GSSENC_REQUEST 80877104

/* The startup message (protocol 3.x, then name=value pairs), or a
 * request for SSL or GSS encryption. */
static int pg_client(const struct stream *s, const struct stream *srv)
{
	uint32_t len, code;
	size_t i;

	(void)srv;
	if (s->n < 8)
		return short_of(s, NO);
	len = be32(s->b);
	code = be32(s->b + 4);
	if (code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST)
		return len == 8 ? YES : NO;
	if (code >> 16 != 3 || (code & 0xffff) > 2 || len < 9 || len > 10000 ||
	    len < s->first_len)
		return NO;
	/* the first parameter name: lower-case letters (user, database) */
	for (i = 8; i < s->n && i < len && s->b[i]; i++)
		if (!(s->b[i] >= 'a' && s->b[i] <= 'z') && s->b[i] != '_')
			return NO;
	if (i == s->n)
		return short_of(s, i > 8 ? YES : NO);
	return i > 8 && s->b[i] == 0 ? YES : NO;
}

static int pg_server(const struct stream *s, const struct stream *cli)
{
	uint32_t code = be32(cli->b + 4), len, auth;

	if (s->n < 1)
		return short_of(s, NO);
	if (code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST) {
		/* one byte: yes (S for SSL, G for GSS) or no */
		if (s->b[0] != 'N' &&
		    s->b[0] != (code == PG_SSL_REQUEST ? 'S' : 'G'))
			return NO;
		return s->first_len == 1 ? YES : NO;
	}
	if (s->n < 6)
		return short_of(s, NO);
	len = be32(s->b + 1);
	if (s->b[0] == 'E') /* an error: its fields start with a type */
		return len >= 5 && len < 10000 &&
				       strchr("SVCMDHPpqWstcdnFLR", s->b[5]) &&
				       s->b[5] ?
			       YES :
			       NO;
	if (s->b[0] != 'R' || len < 8 || len > 2048)
		return NO;
	if (s->n < 9)
		return short_of(s, NO);
	auth = be32(s->b + 5);
	/* ok, password kinds, GSS/SSPI, SASL */
	return auth <= 12 && auth != 1 && auth != 4 && auth != 6 ? YES : NO;
}

/* --- MySQL / MariaDB (server speaks first) --- */

/* The initial handshake: a packet of sequence 0, protocol version 10,
 * then the server's version, a NUL-terminated printable string. */
static int mysql_greeting(const struct stream *s)
{
	uint32_t len;
	size_t i;

	if (s->n < 6)
		return short_of(s, NO);
	len = le24(s->b);
	if (s->b[3] != 0 || s->b[4] != 10 || len < 20 || len > 1024 ||
	    !is_digit(s->b[5]))
		return NO;
	/* one write, though maybe more than one segment */
	if (s->first_len > len + 4)
		return NO;
	for (i = 5; i < s->n && i < 4 + len && s->b[i]; i++)
		if (!is_print(s->b[i]))
			return NO;
	if (i == s->n)
		return short_of(s, YES);
	return s->b[i] == 0 ? YES : NO;
}

/* What the client says next: its handshake response (or SSL request),
 * sequence 1. */
static bool mysql_client_fits(const struct stream *c)
{
	return c->n < 4 || (c->b[3] == 1 && le24(c->b) >= 4);
}

/* Inside TLS (after the SSL request, sequence 1, on the wire) the
 * plaintext begins with the client's login, sequence 2: capabilities
 * with CLIENT_PROTOCOL_41 and CLIENT_SSL, the largest packet, the
 * character set, then 23 bytes of zeros (MariaDB's clients put their
 * extended capabilities in the last 4: 19 are checked). */
#define MYSQL_PROTOCOL_41 0x200
#define MYSQL_SSL 0x800

static int mysql_tls_login(const struct stream *c, const struct stream *s)
{
	uint32_t want = MYSQL_PROTOCOL_41 | MYSQL_SSL;

	(void)s;
	if (c->n < 4)
		return short_of(c, NO);
	if (c->b[3] != 2 || le24(c->b) < 32)
		return NO;
	if (c->n < 36)
		return short_of(c, NO);
	if ((le24(c->b + 4) & want) != want)
		return NO;
	for (size_t i = 13; i < 32; i++)
		if (c->b[i])
			return NO;
	return YES;
}

/* The server's answer to it, sequence 3: OK, ERR, an authentication
 * switch or more authentication data. */
static int mysql_tls_answer(const struct stream *s, const struct stream *c)
{
	(void)c;
	if (s->n < 5)
		return short_of(s, NO);
	if (s->b[3] != 3 || !le24(s->b))
		return NO;
	return s->b[4] == 0x00 || s->b[4] == 0xff || s->b[4] == 0xfe ||
			       s->b[4] == 0x01 ?
		       YES :
		       NO;
}

/* --- SSH --- */

/* "SSH-2.0-..." (or 1.99, for old clients) from either end. */
static int ssh_banner(const struct stream *s)
{
	int r = starts(s, "SSH-");

	if (r != YES)
		return r;
	if (s->n < 8)
		return short_of(s, NO);
	if (!memcmp(s->b + 4, "2.0-", 4))
		return YES;
	if (s->n < 9)
		return short_of(s, NO);
	return memcmp(s->b + 4, "1.99-", 5) ? NO : YES;
}

static int ssh_client(const struct stream *s, const struct stream *srv)
{
	(void)srv;
	return ssh_banner(s);
}

static int ssh_server(const struct stream *s, const struct stream *cli)
{
	(void)cli;
	return ssh_banner(s);
}

/* --- Redis (RESP2, RESP3, inline commands) --- */

static const char *const redis_inline[] = {
	"PING",	  "GET",  "SET",  "INFO",     "AUTH",	"HELLO",   "QUIT",
	"SELECT", "KEYS", "DEL",  "INCR",     "MGET",	"MSET",	   "EXISTS",
	"CONFIG", "SCAN", "TYPE", "FLUSHALL", "DBSIZE", "COMMAND", "CLIENT",
};

/* Case-insensitive: whether the word at s->b ends at a space or CRLF
 * and is one of the commands people type inline. */
static int redis_inline_cmd(const struct stream *s)
{
	size_t n = 0;

	/* "GET / HTTP/1.1" is HTTP's */
	if (http_client(s, NULL) != NO)
		return NO;
	while (n < s->n && is_alpha(s->b[n]))
		n++;
	if (n == s->n)
		return short_of(s, NO);
	if (s->b[n] != ' ' && s->b[n] != '\r')
		return NO;
	for (size_t k = 0; k < ARRAY_SIZE(redis_inline); k++) {
		if (strlen(redis_inline[k]) != n)
			continue;
		if (!strncasecmp((const char *)s->b, redis_inline[k], n))
			return YES;
	}
	return NO;
}

/* *N CRLF $L CRLF then a command name of L letters. */
static int redis_client(const struct stream *s, const struct stream *srv)
{
	size_t i = 1, name;
	int r;

	(void)srv;
	if (s->n < 1)
		return short_of(s, NO);
	if (s->b[0] != '*')
		return redis_inline_cmd(s);
	if ((r = crlf_number(s, &i, false)) != YES)
		return r;
	if (i >= s->n)
		return short_of(s, NO);
	if (s->b[i++] != '$')
		return NO;
	name = i;
	if ((r = crlf_number(s, &i, false)) != YES)
		return r;
	for (size_t len = strtoul((const char *)s->b + name, NULL, 10), k = 0;
	     k < len; k++, i++) {
		if (i == s->n)
			return short_of(s, k ? YES : NO);
		if (!is_alpha(s->b[i]) && s->b[i] != '-' && s->b[i] != '_')
			return NO;
	}
	return YES;
}

/* A RESP2 or RESP3 reply. */
static int redis_server(const struct stream *s, const struct stream *cli)
{
	size_t i = 1;

	(void)cli;
	if (s->n < 2)
		return short_of(s, NO);
	switch (s->b[0]) {
	case '+': /* simple string */
		return crlf_line(s, 1);
	case '-': /* error: an upper-case code (ERR, WRONGTYPE, NOAUTH ...) */
		for (i = 1; i < s->n && s->b[i] >= 'A' && s->b[i] <= 'Z'; i++)
			;
		if (i == s->n)
			return short_of(s, i > 1 ? YES : NO);
		if (i < 3 || (s->b[i] != ' ' && s->b[i] != '\r'))
			return NO;
		return crlf_line(s, i);
	case ':': /* integer */
	case '$': /* bulk string (-1: null) */
	case '*': /* array */
	case '%': /* map */
	case '~': /* set */
	case '>': /* push */
	case '|': /* attributes */
	case '=': /* verbatim string */
	case '!': /* bulk error */
	case '(': /* big number */
		return crlf_number(s, &i, s->b[0] != '%');
	case '_': /* null */
		return starts(s, "_\r\n");
	case '#': /* boolean */
		if (s->n < 4)
			return short_of(s, NO);
		return (s->b[1] == 't' || s->b[1] == 'f') && s->b[2] == '\r' &&
				       s->b[3] == '\n' ?
			       YES :
			       NO;
	case ',': /* double */
		return crlf_line(s, 1);
	}
	return NO;
}

/* --- memcached (text, meta and binary) --- */

static const char *const mc_commands[] = {
	"get",	   "gets",   "gat",	"gats",	   "set",	"add",
	"replace", "append", "prepend", "cas",	   "delete",	"incr",
	"decr",	   "touch",  "stats",	"version", "flush_all", "verbosity",
	"mg",	   "ms",     "md",	"ma",	   "mn",	"me",
};

static const char *const mc_replies[] = {
	"VALUE ",
	"END\r\n",
	"STORED\r\n",
	"NOT_STORED\r\n",
	"EXISTS\r\n",
	"NOT_FOUND\r\n",
	"DELETED\r\n",
	"TOUCHED\r\n",
	"OK\r\n",
	"ERROR\r\n",
	"CLIENT_ERROR ",
	"SERVER_ERROR ",
	"STAT ",
	"VERSION ",
	"HD",
	"VA ",
	"EN\r\n",
	"NF",
	"NS",
	"EX",
	"MN\r\n",
	"ME ",
};

#define MC_REQ_MAGIC 0x80
#define MC_RES_MAGIC 0x81

/* The binary protocol's 24-byte header: magic, opcode, key length,
 * extras length, data type 0, then a body that holds key and extras. */
static int mc_binary(const struct stream *s, uint8_t magic)
{
	if (s->n < 24)
		return short_of(s, NO);
	if (s->b[0] != magic || s->b[1] > 0x48 || s->b[5] != 0)
		return NO;
	return be32(s->b + 8) >= be16(s->b + 2) + s->b[4] &&
			       be32(s->b + 8) <= (1u << 20) + 256 ?
		       YES :
		       NO;
}

static int mc_client(const struct stream *s, const struct stream *srv)
{
	int r = NO;

	(void)srv;
	if (s->n >= 1 && s->b[0] == MC_REQ_MAGIC)
		return mc_binary(s, MC_REQ_MAGIC);
	for (size_t k = 0; k < ARRAY_SIZE(mc_commands); k++) {
		size_t len;

		if (s->n && s->b[0] != (uint8_t)mc_commands[k][0])
			continue; /* most streams, most commands */
		len = strlen(mc_commands[k]);
		if (s->n <= len) {
			if (!memcmp(s->b, mc_commands[k], s->n))
				r = short_of(s, NO);
			continue;
		}
		if (!memcmp(s->b, mc_commands[k], len) &&
		    (s->b[len] == ' ' || s->b[len] == '\r'))
			return crlf_line(s, len);
	}
	return r;
}

static int mc_server(const struct stream *s, const struct stream *cli)
{
	int r = NO, m;

	if (cli->b[0] == MC_REQ_MAGIC) {
		/* the same opcode, and the request's opaque echoed */
		if ((m = mc_binary(s, MC_RES_MAGIC)) != YES)
			return m;
		return s->b[1] == cli->b[1] &&
				       !memcmp(s->b + 12, cli->b + 12, 4) ?
			       YES :
			       NO;
	}
	for (size_t k = 0; k < ARRAY_SIZE(mc_replies); k++) {
		if ((m = starts(s, mc_replies[k])) == YES)
			return crlf_line(s, 0);
		if (m == MORE)
			r = MORE;
	}
	/* incr/decr answer with the new value */
	if (!strncmp((const char *)cli->b, "incr ", 5) ||
	    !strncmp((const char *)cli->b, "decr ", 5)) {
		size_t i = 0;

		return crlf_number(s, &i, false);
	}
	return r;
}

/* --- Kafka --- */

/* size, api_key, api_version, correlation_id, client_id: printable, and
 * not empty (every client names itself; a null or empty id would leave
 * little but a length and a few small numbers, which a ZooKeeper
 * connect or a home-made protocol match as well). */
static int kafka_client(const struct stream *s, const struct stream *srv)
{
	uint32_t size;
	int32_t idlen;

	(void)srv;
	if (s->n < 14)
		return short_of(s, NO);
	size = be32(s->b);
	idlen = (int16_t)be16(s->b + 12);
	if (size < 10 || size > (100u << 20) || size + 4 < s->first_len ||
	    be16(s->b + 4) > 90 || be16(s->b + 6) > 17 || idlen < 1 ||
	    (uint32_t)idlen > size - 10)
		return NO;
	for (int32_t k = 0; k < idlen; k++) {
		if (14 + (size_t)k >= s->n)
			return short_of(s, YES);
		if (!is_print(s->b[14 + k]))
			return NO;
	}
	return YES;
}

/* size, then the request's correlation id. */
static int kafka_server(const struct stream *s, const struct stream *cli)
{
	uint32_t size;

	if (s->n < 8)
		return short_of(s, NO);
	size = be32(s->b);
	return size >= 4 && size <= (100u << 20) && size + 4 >= s->first_len &&
			       !memcmp(s->b + 4, cli->b + 8, 4) ?
		       YES :
		       NO;
}

/* --- MQTT --- */

/* The remaining length (1-4 bytes, 7 bits each) at s->b[1]; *i moves
 * past it. */
static int mqtt_remaining(const struct stream *s, size_t *i, uint32_t *len)
{
	*len = 0;
	for (*i = 1; *i < 5; (*i)++) {
		if (*i >= s->n)
			return short_of(s, NO);
		*len |= (uint32_t)(s->b[*i] & 0x7f) << (7 * (*i - 1));
		if (!(s->b[*i] & 0x80)) {
			(*i)++;
			return YES;
		}
	}
	return NO;
}

/* CONNECT: protocol name MQTT (3.1.1, 5) or MQIsdp (3.1) and level. */
static int mqtt_client(const struct stream *s, const struct stream *srv)
{
	uint32_t len;
	size_t i;
	int r;

	(void)srv;
	if (s->n < 1)
		return short_of(s, NO);
	if (s->b[0] != 0x10)
		return NO;
	if ((r = mqtt_remaining(s, &i, &len)) != YES)
		return r;
	if (len < 10 || s->n < i + 9)
		return len < 10 ? NO : short_of(s, NO);
	if (!memcmp(s->b + i, "\0\4MQTT", 6))
		return (s->b[i + 6] == 4 || s->b[i + 6] == 5) &&
				       !(s->b[i + 7] & 1) ?
			       YES :
			       NO;
	if (s->n < i + 10)
		return short_of(s, NO);
	return !memcmp(s->b + i, "\0\6MQIsdp", 8) && s->b[i + 8] == 3 ? YES :
									NO;
}

/* CONNACK: flags 0 or 1, then a return code (3.1.1) or reason (5). */
static int mqtt_server(const struct stream *s, const struct stream *cli)
{
	(void)cli;
	if (s->n < 4)
		return short_of(s, NO);
	if (s->b[0] != 0x20 || s->b[1] < 2 || s->b[1] > 127 || s->b[2] > 1)
		return NO;
	return s->b[3] <= 5 || s->b[3] >= 0x80 ? YES : NO;
}

/* --- AMQP 0-9-1 --- */

static int amqp_client(const struct stream *s, const struct stream *srv)
{
	(void)srv;
	return starts(s, "AMQP\0\0\x09\x01") == YES ? YES :
	       starts(s, "AMQP") == NO		    ? NO :
						      short_of(s, NO);
}

/* Connection.Start (a method frame on channel 0, class 10 method 10,
 * version 0-9), or the server's own header when it wants another
 * version. */
static int amqp_server(const struct stream *s, const struct stream *cli)
{
	(void)cli;
	if (s->n < 13)
		return short_of(s, NO);
	if (!memcmp(s->b, "AMQP\0", 5))
		return YES;
	return s->b[0] == 1 && be16(s->b + 1) == 0 && be16(s->b + 7) == 10 &&
			       be16(s->b + 9) == 10 && s->b[11] == 0 &&
			       s->b[12] == 9 ?
		       YES :
		       NO;
}

/* --- DNS over TCP --- */

/* A two-byte length, then a query: QR clear, a standard opcode, one
 * question, and a name of valid labels. */
static int dns_client(const struct stream *s, const struct stream *srv)
{
	uint32_t len, opcode;
	size_t i;

	(void)srv;
	if (s->n < 14)
		return short_of(s, NO);
	len = be16(s->b);
	opcode = s->b[4] >> 3 & 0xf;
	if (len < 17 || len + 2 < s->first_len || (s->b[4] & 0x80) ||
	    (opcode != 0 && opcode != 4 && opcode != 5) ||
	    be16(s->b + 6) != 1 || (opcode == 0 && be16(s->b + 8) != 0))
		return NO;
	for (i = 14; i < s->n && s->b[i];) {
		uint8_t l = s->b[i];

		if (l > 63 || i + 1 + l > 2 + len)
			return NO;
		for (size_t k = 1; k <= l; k++) {
			if (i + k >= s->n)
				return short_of(s, YES);
			if (!is_print(s->b[i + k]))
				return NO;
		}
		i += 1 + l;
	}
	return i == s->n ? short_of(s, YES) : YES;
}

/* The same id and opcode, QR set, the question count echoed. */
static int dns_server(const struct stream *s, const struct stream *cli)
{
	if (s->n < 8)
		return short_of(s, NO);
	return be16(s->b) >= 12 && !memcmp(s->b + 2, cli->b + 2, 2) &&
			       (s->b[4] & 0x80) &&
			       (s->b[4] & 0x78) == (cli->b[4] & 0x78) &&
			       be16(s->b + 6) <= 1 ?
		       YES :
		       NO;
}

/* --- ZooKeeper --- */

/* ConnectRequest: protocol version 0, last zxid, a timeout, a session id
 * and a 16-byte password. */
static int zk_client(const struct stream *s, const struct stream *srv)
{
	uint32_t len;

	(void)srv;
	if (s->n < 32)
		return short_of(s, NO);
	len = be32(s->b);
	return len >= 44 && len <= 64 && len + 4 >= s->first_len &&
			       be32(s->b + 4) == 0 && be32(s->b + 16) > 0 &&
			       be32(s->b + 16) <= 3600000 &&
			       be32(s->b + 28) == 16 ?
		       YES :
		       NO;
}

/* ConnectResponse: protocol version 0, the timeout granted, a session
 * id and its 16-byte password. */
static int zk_server(const struct stream *s, const struct stream *cli)
{
	uint32_t len;

	(void)cli;
	if (s->n < 24)
		return short_of(s, NO);
	len = be32(s->b);
	return len >= 36 && len <= 64 && be32(s->b + 4) == 0 &&
			       be32(s->b + 8) <= 3600000 &&
			       be32(s->b + 20) == 16 ?
		       YES :
		       NO;
}

/* --- deciding --- */

struct rule {
	int proto;
	int (*client)(const struct stream *c, const struct stream *s);
	int (*server)(const struct stream *s, const struct stream *c);
};

static const struct rule rules[] = {
	{ PROTO_HTTP, http_client, http_server },
	{ PROTO_HTTP2, http2_client, http2_server },
	{ PROTO_TLS, tls_client, tls_server },
	{ PROTO_REDIS, redis_client, redis_server },
	{ PROTO_POSTGRESQL, pg_client, pg_server },
	{ PROTO_MEMCACHED, mc_client, mc_server },
	{ PROTO_KAFKA, kafka_client, kafka_server },
	{ PROTO_MQTT, mqtt_client, mqtt_server },
	{ PROTO_AMQP, amqp_client, amqp_server },
	{ PROTO_DNS, dns_client, dns_server },
	{ PROTO_SSH, ssh_client, ssh_server },
	{ PROTO_ZOOKEEPER, zk_client, zk_server },
	{ PROTO_MYSQL, mysql_tls_login, mysql_tls_answer },
};
#define NR_RULES ARRAY_SIZE(rules)

/* Joins one direction's messages into s. */
static void gather(const struct proto_msg *msgs, size_t n, bool from_server,
		   struct stream *s)
{
	s->n = 0;
	s->cut = false;
	s->first_len = 0;
	s->nmsgs = 0;
	for (size_t i = 0; i < n && !s->cut; i++) {
		const struct proto_msg *m = &msgs[i];
		size_t take = m->caplen < m->len ? m->caplen : m->len;

		if (m->from_server != from_server || !m->len)
			continue;
		if (!s->nmsgs++)
			s->first_len = m->len;
		if (take > STREAM_MAX - s->n) {
			take = STREAM_MAX - s->n;
			s->cut = true;
		}
		memcpy(s->b + s->n, m->data, take);
		s->n += take;
		if (m->caplen < m->len)
			s->cut = true;
	}
}

static void decide(struct proto_result *r, int proto)
{
	r->proto = proto;
	r->decided = true;
}

/* The server spoke first: a greeting only one protocol sends, which the
 * client's answer (if any yet) must not contradict. */
static int greeting(const struct stream *c, const struct stream *s)
{
	int g;

	if ((g = ssh_banner(s)) == YES)
		return ssh_banner(c) == NO ? -1 : PROTO_SSH;
	if (g == MORE)
		return 0;
	if ((g = mysql_greeting(s)) == YES)
		return mysql_client_fits(c) ? PROTO_MYSQL : -1;
	return g == MORE ? 0 : -1;
}

/* Decided by request and response: the protocols whose client check the
 * client's stream passes, narrowed to those the server's answer fits. */
static void request_response(const struct stream *c, const struct stream *s,
			     bool done, struct proto_result *r)
{
	int fits = 0, fit = PROTO_UNKNOWN;
	bool waiting = false;

	for (size_t k = 0; k < NR_RULES; k++) {
		int rc = rules[k].client(c, s), rs;

		/* A server answers whole requests: once it has spoken, a
		 * request that would need more bytes is not this one. */
		if (rc == MORE && !s->n)
			waiting = true;
		if (rc != YES)
			continue;
		if (!s->n) {
			waiting = true;
			continue;
		}
		rs = rules[k].server(s, c);
		if (rs == MORE)
			waiting = true;
		if (rs == YES) {
			fits++;
			fit = rules[k].proto;
		}
	}
	if (fits == 1) {
		decide(r, fit);
		if (fit == PROTO_TLS)
			tls_sni(c, r->sni, sizeof(r->sni));
		return;
	}
	/* Two protocols that fit the same exchange: not evidence enough. */
	if (fits > 1 || !waiting || done)
		decide(r, PROTO_UNKNOWN);
}

void protocol__classify(const struct proto_msg *msgs, size_t n, bool done,
			struct proto_result *r)
{
	/* 2 KiB: off the stack of whoever calls (one caller at a time). */
	static struct stream c, s;
	size_t first;

	memset(r, 0, sizeof(*r));
	gather(msgs, n, false, &c);
	gather(msgs, n, true, &s);
	for (first = 0; first < n && !msgs[first].len; first++)
		;
	if (first < n && msgs[first].from_server) {
		int g = greeting(&c, &s);

		if (g > 0)
			decide(r, g);
		else if (!g && done)
			decide(r, PROTO_UNKNOWN);
		/* Not a greeting: some servers speak first in request and
		 * response protocols too (an HTTP/2 server's SETTINGS). */
		if (g >= 0)
			return;
	}
	if (!c.n) {
		if (done)
			decide(r, PROTO_UNKNOWN);
		return;
	}
	request_response(&c, &s, done, r);
}
