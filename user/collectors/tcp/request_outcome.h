/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A request's outcome as its record shows it (docs/design/outcomes.md):
 * `error` and the numeric status from the classifier the kernel runs too
 * (bpf/tcp/outcome.h: the one place that decides them), and the strings
 * only user space writes: Redis's error word, PostgreSQL's SQLSTATE,
 * memcached's reply word, DNS's RCODE name, HTTP's method and path,
 * HTTP/2's :method, :path and grpc-status where the heads hold them
 * plainly; gRPC's outcome, its grpc-status, is user space's alone
 * (request_outcome__classify). A head that shows two requests where
 * kmond counted one leaves the outcome unknown. */
#ifndef KMON_REQUEST_OUTCOME_H
#define KMON_REQUEST_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/tcp/outcome.h"

#define REQUEST_STATUS_MAX 24
#define REQUEST_METHOD_MAX 16
#define REQUEST_PATH_MAX OUTCOME_REQ_HEAD

struct request_outcome {
	bool known; /* error is meaningful */
	bool error;
	bool has_status;
	bool status_is_str; /* status_str, else status_num */
	long status_num;
	char status_str[REQUEST_STATUS_MAX];
	bool has_method, has_path, has_grpc;
	char method[REQUEST_METHOD_MAX];
	char path[REQUEST_PATH_MAX]; /* raw, as sent: never cut short */
	int grpc_status;
};

/* Decodes one request: proto (PROTO_*) and side (enum tcp_side), the
 * request's head (req_len bytes captured of req_bytes sent) and the
 * response's (resp_len of resp_bytes); grpc: the connection carries gRPC
 * (tcp_conn.grpc), whose outcome is its grpc-status. */
void request_outcome__decode(struct request_outcome *out, int proto, int side,
			     const uint8_t *req, size_t req_len,
			     uint64_t req_bytes, const uint8_t *resp,
			     size_t resp_len, uint64_t resp_bytes, bool grpc);

/* The counts' outcome of a response head (resp_len bytes at resp, in a
 * buffer of OUTCOME_RESP_HEAD), as its record has it: the classifier's
 * (outcome.h) and, on a gRPC connection, the grpc-status's. The kernel
 * leaves gRPC's requests to user space (struct tcp_outcome_late). */
void request_outcome__classify(struct outcome *o, int proto, int side,
			       const uint8_t *resp, size_t resp_len,
			       uint32_t stream, bool grpc);

/* "NOERROR", "NXDOMAIN", ... for a DNS RCODE, else NULL. */
const char *request_outcome__rcode_name(unsigned int rcode);

#endif
