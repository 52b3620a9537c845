/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The user-space half of protocol identification, run by the tcp
 * collector: gathers the kernel's samples per connection, classifies them
 * (protocol.c), hands each verdict back to the kernel, and keeps the
 * protocol of every server endpoint (`endpoint` records). */
#ifndef KMON_PROTO_TRACK_H
#define KMON_PROTO_TRACK_H

#include <stdint.h>

#include <linux/types.h>

#include "bpf/tcp/proto.h"

struct kmond;
struct proto_track;

/* verdict_fd: the kernel's proto_verdicts map; gen: the kernel's
 * proto_verdict_gen, bumped after verdicts are written. */
struct proto_track *proto_track__new(struct kmond *k, int verdict_fd,
				     volatile uint32_t *gen);
void proto_track__free(struct proto_track *t); /* NULL-safe */

/* A segment's sample, from the ring. */
void proto_track__sample(struct proto_track *t, const struct proto_sample *s);
/* A connection's close, from the ring: decides it and forgets it.
 * Returns its protocol, or -1 when it was not followed (its samples lost,
 * or too many followed at once). */
int proto_track__close(struct proto_track *t, const struct proto_close *s);

/* The protocol of a connection the kernel had no verdict for when its
 * request finished (PROTO_UNKNOWN when not decided). */
int proto_track__conn(struct proto_track *t, uint64_t cookie);

/* The server name of a TLS connection's ClientHello, NULL when none is
 * known (none sent, or forgotten: see SNI_SLOTS). */
const char *proto_track__sni(const struct proto_track *t, uint64_t cookie);

/* The protocol most connections of a server (its service, else its pid)
 * were given, PROTO_UNKNOWN when none. */
int proto_track__server(struct proto_track *t, uint32_t pid, uint32_t svc);

/* Each interval: decides connections idle too long, forgets closed ones
 * and emits the endpoints due. */
void proto_track__collect(struct proto_track *t, uint64_t ts);

/* Connections decided; and those left undecided because too many were
 * followed at once (lost, in stats). */
uint64_t proto_track__decided(const struct proto_track *t);
uint64_t proto_track__dropped(const struct proto_track *t);

#endif
