/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What user space reads of HTTP heads beside the outcome: HTTP/1's
 * request line and whether the head holds more than one request; HTTP/2's
 * :method, :path and grpc-status, where HPACK carries them plainly (a
 * static-table index, or a literal not Huffman-coded). Parts of
 * request_outcome.c. */
#ifndef KMON_REQUEST_HTTP_H
#define KMON_REQUEST_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct request_outcome;

/* The method and, when the request line ends inside the head, the path. */
void request_http__line(struct request_outcome *out, const uint8_t *req,
			size_t req_len);
/* Whether the head shows the first request end before req_bytes: the
 * headers' end and a body length (Content-Length, or none) inside it. */
bool request_http__more_than_one(const uint8_t *req, size_t req_len,
				 uint64_t req_bytes);
/* :method and :path from the request's first HEADERS. */
void request_http2__request(struct request_outcome *out, const uint8_t *req,
			    size_t req_len);
/* grpc-status from the response's HEADERS frames on stream (the
 * request's; trailers too, when the head holds them). */
void request_http2__grpc(struct request_outcome *out, const uint8_t *resp,
			 size_t resp_len, uint32_t stream);
/* How many streams the request head's HEADERS frames open: 0, 1, or 2
 * for more than one (a client with several requests in flight). */
int request_http2__streams(const uint8_t *req, size_t req_len);

#endif
