// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes as a request's heads. The input is
 * [proto][side | grpc << 1][req_len][req_more][resp_more], then req_len
 * bytes of
 * request head (at most OUTCOME_REQ_HEAD), then the response head (the
 * rest, at most OUTCOME_RESP_HEAD); *_more say how many bytes the
 * messages had past their heads. Each head is a copy of its own, so ASan
 * sees a read past it. The decoder must not crash, must agree with the
 * classifier (which must not read past the captured length: a buffer
 * padded two ways gives one answer), must write only printable strings,
 * and the routes of its paths must stay within their bound. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "collectors/tcp/request_outcome.h"
#include "collectors/tcp/routes.h"
#include "fuzz.h"

#define FUZZ_ROUTES 16

static struct routes *routes;

static void check_printable(const char *s, size_t size)
{
	size_t len = strnlen(s, size);

	if (len == size)
		abort();
	for (size_t i = 0; i < len; i++)
		if (!isprint((unsigned char)s[i]))
			abort();
}

/* The classifier on a buffer whose bytes past len are fill, for the
 * HTTP/2 stream the request opened (as the kernel and user space take
 * it from the request's head). */
static void classify(struct outcome *o, int proto, int side,
		     const uint8_t *resp, size_t len, int fill, __u32 stream)
{
	uint8_t b[OUTCOME_RESP_HEAD];

	memset(b, fill, sizeof(b));
	memcpy(b, resp, len);
	outcome_classify(o, proto, side, b, len, stream);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request_outcome out;
	struct outcome zeros, ones, counted;
	uint8_t padded[OUTCOME_RESP_HEAD];
	bool grpc;
	size_t req_len, resp_len;
	uint8_t *req, *resp;
	char route[128];
	int proto, side;
	__u32 stream;

	if (size < 5)
		return 0;
	if (!routes)
		routes = routes__new(FUZZ_ROUTES);
	proto = data[0] % (PROTO_NR + 1);
	side = data[1] & 1;
	grpc = data[1] & 2;
	req_len = data[2] % (OUTCOME_REQ_HEAD + 1);
	if (req_len > size - 5)
		req_len = size - 5;
	resp_len = size - 5 - req_len;
	if (resp_len > OUTCOME_RESP_HEAD)
		resp_len = OUTCOME_RESP_HEAD;
	req = malloc(req_len ? req_len : 1);
	resp = malloc(resp_len ? resp_len : 1);
	memcpy(req, data + 5, req_len);
	memcpy(resp, data + 5 + req_len, resp_len);

	request_outcome__decode(&out, proto, side, req, req_len,
				req_len + data[3] * 7, resp, resp_len,
				resp_len + data[4] * 13, grpc);
	stream = outcome_h2_request_stream(req, req_len);
	classify(&zeros, proto, side, resp, resp_len, 0, stream);
	classify(&ones, proto, side, resp, resp_len, 0xff, stream);
	if (memcmp(&zeros, &ones, sizeof(zeros)) != 0)
		abort(); /* it read past the captured length */
	/* gRPC's :status stands without its outcome */
	if ((out.error ||
	     (out.has_status && !(grpc && proto == PROTO_HTTP2))) &&
	    !out.known)
		abort();
	/* the record's outcome is the counts', whose head (the kernel's)
	 * holds other bytes past its length */
	memset(padded, 0xff, sizeof(padded));
	memcpy(padded, resp, resp_len);
	request_outcome__classify(&counted, proto, side, padded, resp_len,
				  stream, grpc);
	if (!grpc && memcmp(&counted, &zeros, sizeof(zeros)) != 0)
		abort();
	if (out.known && (!counted.known || out.error != counted.error))
		abort(); /* user space decided the error again */
	check_printable(out.status_str, sizeof(out.status_str));
	check_printable(out.method, sizeof(out.method));
	check_printable(out.path, sizeof(out.path));
	if (out.has_grpc && (out.grpc_status < 0 || out.grpc_status > 99))
		abort();
	if (out.has_path) {
		routes__fold(routes, proto, out.path, route, sizeof(route));
		check_printable(route, sizeof(route));
		if (strpbrk(route, "?#") ||
		    routes__count(routes, proto) > FUZZ_ROUTES)
			abort();
	}
	free(req);
	free(resp);
	return 0;
}
