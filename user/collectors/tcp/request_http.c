// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP/1 request lines and HTTP/2 header blocks, read only as far as the
 * captured heads hold them: a value that runs past the head is absent,
 * never cut short. HPACK's Huffman-coded strings and its dynamic table
 * (what a connection's earlier requests put there) are not decoded. */
#include <string.h>

#include "collectors/tcp/request_http.h"
#include "collectors/tcp/request_outcome.h"

/* Where s (slen bytes) first occurs in b[from, n), or n. */
static size_t find(const uint8_t *b, size_t n, size_t from, const char *s,
		   size_t slen)
{
	while (from + slen <= n) {
		const uint8_t *p = memchr(b + from, s[0], n - slen + 1 - from);

		if (!p)
			break;
		if (memcmp(p, s, slen) == 0)
			return p - b;
		from = p - b + 1;
	}
	return n;
}

#define ONES 0x0101010101010101ULL

/* Where the next '\r' from i is, or n: eight bytes at a time (a byte at
 * a time was most of what a record's outcome cost kmond, on wrk's
 * requests; on a head of 128 bytes at most, libc's memchr costs more in
 * its call than in its work). A word's bytes that equal '\r' are those
 * that x = w ^ "\r\r.." has zero: (x - ONES) & ~x sets their high bit,
 * and the lowest byte so marked is the first such byte (a byte above it
 * may be marked wrongly, by the borrow). The lowest byte is the first
 * one in memory on the little-endian machines kmond runs on. */
static size_t next_cr(const uint8_t *b, size_t n, size_t i)
{
	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		       "next_cr reads words as little-endian");
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		w ^= ONES * '\r';
		w = (w - ONES) & ~w & ONES * 0x80;
		if (w)
			return i + __builtin_ctzll(w) / 8;
	}
	for (; i < n; i++)
		if (b[i] == '\r')
			return i;
	return n;
}

/* Where the line from `from` ends (its CRLF), or n. */
static size_t line_end(const uint8_t *b, size_t n, size_t from)
{
	for (size_t i = next_cr(b, n, from); i + 2 <= n;
	     i = next_cr(b, n, i + 1))
		if (b[i + 1] == '\n')
			return i;
	return n;
}

static bool is_visible(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

static bool copy_visible(char *dst, size_t size, const uint8_t *s, size_t len)
{
	if (len == 0 || len >= size || !is_visible(s, len))
		return false;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return true;
}

void request_http__line(struct request_outcome *out, const uint8_t *req,
			size_t req_len)
{
	size_t m = 0, path, end;

	while (m < req_len && req[m] >= 'A' && req[m] <= 'Z')
		m++;
	if (m == req_len || req[m] != ' ')
		return;
	out->has_method =
		copy_visible(out->method, sizeof(out->method), req, m);
	path = m + 1;
	end = find(req, req_len, path, " ", 1);
	/* the line must end in the head: " HTTP/1.x\r\n" */
	if (end + 11 > req_len || memcmp(req + end, " HTTP/1.", 8) != 0 ||
	    memcmp(req + end + 9, "\r\n", 2) != 0)
		return;
	out->has_path = copy_visible(out->path, sizeof(out->path), req + path,
				     end - path);
}

/* Whether the header line (len bytes) is named name (lower case). */
static bool header_is(const uint8_t *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len <= n || line[n] != ':')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((line[i] | 0x20) != name[i])
			return false;
	return true;
}

/* A Content-Length value: digits after optional spaces, or -1. */
static long long content_length(const uint8_t *v, size_t len)
{
	long long n = 0;
	size_t i = 0;

	while (i < len && v[i] == ' ')
		i++;
	if (i == len)
		return -1;
	for (; i < len && v[i] != ' '; i++) {
		if (v[i] < '0' || v[i] > '9' || n > (1LL << 50))
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n;
}

/* An HTTP/1.1 request has a body only when Content-Length or
 * Transfer-Encoding says so (RFC 9112, 6.3), whatever its method: with
 * the headers' end in the head, and no chunked body (whose end the head
 * cannot show), the first request's length is known. */
bool request_http__more_than_one(const uint8_t *req, size_t req_len,
				 uint64_t req_bytes)
{
	size_t line = line_end(req, req_len, 0), next;
	long long body = 0;

	if (line == req_len)
		return false;
	/* header lines up to the empty one, the headers' end */
	for (line += 2;; line = next + 2) {
		next = line_end(req, req_len, line);
		if (next == req_len)
			return false; /* the headers run past the head */
		if (next == line)
			break;
		if (header_is(req + line, next - line, "transfer-encoding"))
			return false;
		if (header_is(req + line, next - line, "content-length")) {
			size_t value = line + sizeof("content-length:") - 1;

			body = content_length(req + value, next - value);
			if (body < 0)
				return false;
		}
	}
	return line + 2 + (uint64_t)body < req_bytes;
}

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_FRAME_HEADER 9
#define H2_HEADERS 0x1
#define H2_FLAG_PADDED 0x8
#define H2_FLAG_PRIORITY 0x20
#define H2_MAX_FRAMES 16
#define HPACK_MAX_FIELDS 32

/* A HEADERS frame's header block, as far as the head holds it. */
struct h2_block {
	const uint8_t *p;
	size_t len;
	uint32_t stream;
};

/* The next HEADERS frame's block from *off on (frames of other types
 * skipped), or false at the head's end. */
static bool h2_next_headers(const uint8_t *b, size_t n, size_t *off,
			    struct h2_block *blk)
{
	for (int i = 0; i < H2_MAX_FRAMES && *off + H2_FRAME_HEADER <= n; i++) {
		const uint8_t *f = b + *off;
		size_t len = (size_t)f[0] << 16 | f[1] << 8 | f[2];
		size_t at = *off + H2_FRAME_HEADER, frame_end = at + len,
		       pad = 0;

		*off = frame_end;
		if (f[3] != H2_HEADERS)
			continue;
		if (f[4] & H2_FLAG_PADDED) {
			if (at >= n)
				return false;
			pad = b[at++];
		}
		if (f[4] & H2_FLAG_PRIORITY)
			at += 5;
		/* the padding ends the frame: not fields */
		if (at + pad > frame_end || at > n)
			return false;
		blk->p = b + at;
		blk->len = (frame_end - pad < n ? frame_end - pad : n) - at;
		blk->stream = (uint32_t)(f[5] & 0x7f) << 24 | f[6] << 16 |
			      f[7] << 8 | f[8];
		return true;
	}
	return false;
}

/* An HPACK integer of prefix bits at p (RFC 7541, 5.1): the bytes it
 * takes, 0 when it runs past n or past 2^28. */
static size_t hpack_int(const uint8_t *p, size_t n, int prefix, uint32_t *v)
{
	uint32_t max = (1u << prefix) - 1;
	size_t i = 1;

	if (n == 0)
		return 0;
	*v = p[0] & max;
	if (*v < max)
		return 1;
	for (int shift = 0; i < n && shift <= 21; shift += 7) {
		*v += (uint32_t)(p[i] & 0x7f) << shift;
		if (!(p[i++] & 0x80))
			return i;
	}
	return 0;
}

struct hpack_str {
	const uint8_t *p;
	size_t len;
	bool huffman;
};

/* A string literal (RFC 7541, 5.2): the bytes it takes, 0 when it runs
 * past n. */
static size_t hpack_str(const uint8_t *p, size_t n, struct hpack_str *s)
{
	uint32_t len;
	size_t at = hpack_int(p, n, 7, &len);

	if (!at || len > n - at)
		return 0;
	s->p = p + at;
	s->len = len;
	s->huffman = p[0] & 0x80;
	return at + len;
}

/* One header field representation: an indexed field (index, no value),
 * a literal with an indexed name (index) or a new name (index 0), a
 * table size update (index 0, no name, no value). */
struct hpack_field {
	uint32_t index;
	bool indexed;
	struct hpack_str name, value;
};

/* The field at p: the bytes it takes, 0 when it runs past n. */
static size_t hpack_field(const uint8_t *p, size_t n, struct hpack_field *f)
{
	size_t at, more;
	int prefix = 4;

	memset(f, 0, sizeof(*f));
	if (n == 0)
		return 0;
	if (p[0] & 0x80) {
		f->indexed = true;
		return hpack_int(p, n, 7, &f->index);
	}
	if ((p[0] & 0xe0) == 0x20) /* dynamic table size update */
		return hpack_int(p, n, 5, &f->index);
	if ((p[0] & 0xc0) == 0x40)
		prefix = 6;
	at = hpack_int(p, n, prefix, &f->index);
	if (!at)
		return 0;
	if (f->index == 0) {
		more = hpack_str(p + at, n - at, &f->name);
		if (!more)
			return 0;
		at += more;
	}
	more = hpack_str(p + at, n - at, &f->value);
	return more ? at + more : 0;
}

/* Calls fn on each field of the block, to the first the head cuts. */
static void h2_each_field(const struct h2_block *blk,
			  void (*fn)(struct request_outcome *out,
				     const struct hpack_field *f),
			  struct request_outcome *out)
{
	size_t at = 0;

	for (int i = 0; i < HPACK_MAX_FIELDS; i++) {
		struct hpack_field f;
		size_t used = hpack_field(blk->p + at, blk->len - at, &f);

		if (!used)
			return;
		fn(out, &f);
		at += used;
	}
}

static bool plain_is(const struct hpack_str *s, const char *text)
{
	return !s->huffman && s->len == strlen(text) &&
	       memcmp(s->p, text, s->len) == 0;
}

/* HPACK's static table: 2 :method GET, 3 :method POST, 4 :path /,
 * 5 :path /index.html (RFC 7541, appendix A). */
static void h2_request_field(struct request_outcome *out,
			     const struct hpack_field *f)
{
	bool method = f->index == 2 || f->index == 3 ||
		      (f->index == 0 && plain_is(&f->name, ":method"));
	bool path = f->index == 4 || f->index == 5 ||
		    (f->index == 0 && plain_is(&f->name, ":path"));

	if (f->indexed && (f->index == 2 || f->index == 3)) {
		strcpy(out->method, f->index == 2 ? "GET" : "POST");
		out->has_method = true;
	} else if (f->indexed && (f->index == 4 || f->index == 5)) {
		strcpy(out->path, f->index == 4 ? "/" : "/index.html");
		out->has_path = true;
	} else if (!f->indexed && !f->value.huffman && method) {
		out->has_method = copy_visible(out->method, sizeof(out->method),
					       f->value.p, f->value.len);
	} else if (!f->indexed && !f->value.huffman && path) {
		out->has_path = copy_visible(out->path, sizeof(out->path),
					     f->value.p, f->value.len);
	}
}

void request_http2__request(struct request_outcome *out, const uint8_t *req,
			    size_t req_len)
{
	struct h2_block blk;
	size_t off = 0;

	if (req_len >= strlen(H2_PREFACE) &&
	    memcmp(req, H2_PREFACE, strlen(H2_PREFACE)) == 0)
		off = strlen(H2_PREFACE);
	if (h2_next_headers(req, req_len, &off, &blk))
		h2_each_field(&blk, h2_request_field, out);
}

/* "grpc-status" is not in HPACK's static table: a literal with a new
 * name, plain, and its value one or two plain digits. */
static void h2_grpc_field(struct request_outcome *out,
			  const struct hpack_field *f)
{
	const struct hpack_str *v = &f->value;

	if (f->indexed || f->index != 0 || !plain_is(&f->name, "grpc-status") ||
	    v->huffman || v->len < 1 || v->len > 2)
		return;
	for (size_t i = 0; i < v->len; i++)
		if (v->p[i] < '0' || v->p[i] > '9')
			return;
	out->grpc_status = v->p[0] - '0';
	if (v->len == 2)
		out->grpc_status = out->grpc_status * 10 + v->p[1] - '0';
	out->has_grpc = true;
}

void request_http2__grpc(struct request_outcome *out, const uint8_t *resp,
			 size_t resp_len, uint32_t stream)
{
	struct h2_block blk;
	size_t off = 0;

	if (!stream)
		return;
	while (h2_next_headers(resp, resp_len, &off, &blk))
		if (blk.stream == stream) /* not another stream's answer */
			h2_each_field(&blk, h2_grpc_field, out);
}

int request_http2__streams(const uint8_t *req, size_t req_len)
{
	struct h2_block blk;
	uint32_t first = 0;
	size_t off = 0;

	if (req_len >= strlen(H2_PREFACE) &&
	    memcmp(req, H2_PREFACE, strlen(H2_PREFACE)) == 0)
		off = strlen(H2_PREFACE);
	while (h2_next_headers(req, req_len, &off, &blk)) {
		if (first && blk.stream != first)
			return 2;
		first = blk.stream;
	}
	return first != 0;
}
