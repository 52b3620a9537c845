/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Application protocol identification from the first bytes of a TCP
 * connection: a pure function of the captured messages, never of ports.
 *
 * A protocol is named only on evidence from both directions (a request
 * and a response that fits it) or on a server greeting nothing else sends
 * (the SSH banner, the MySQL handshake). Messages that contradict each
 * other, or that nothing fits, leave the connection unknown: a wrong name
 * is worse than none. */
#ifndef KMON_PROTOCOL_H
#define KMON_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/tcp/proto.h" /* PROTO_* ids */

#define PROTOCOL_SNI_MAX 256

/* One message (a send, or a received segment) of the connection. */
struct proto_msg {
	bool from_server;
	uint32_t len; /* its full length */
	uint32_t caplen; /* bytes in data, <= len */
	const uint8_t *data;
};

struct proto_result {
	int proto; /* PROTO_* */
	/* Final: more messages would not change it. Otherwise proto is
	 * PROTO_UNKNOWN and the classifier wants more messages. */
	bool decided;
	char sni[PROTOCOL_SNI_MAX]; /* tls: the ClientHello's server name */
};

/* Classifies msgs (in the order they were sent on each direction; the
 * first from_server message before any client message means the server
 * spoke first). done: no more messages will come (closed, or the capture
 * limit): an undecided connection is then decided unknown. */
void protocol__classify(const struct proto_msg *msgs, size_t n, bool done,
			struct proto_result *r);

/* "http", ... "unknown" for every id; "unknown" for ids out of range. */
const char *protocol__name(int proto);

#endif
