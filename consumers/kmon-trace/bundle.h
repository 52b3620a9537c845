/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-trace --fleet: what a stage sends to one partition of
 * <prefix><group>.span in a batch goes as one Kafka message, a bundle,
 * so that a record costs the producer, the broker and stage 2's
 * consumer a share of one message, not a message of its own (each is
 * about a microsecond of CPU, more than stage 2's reading of the
 * record). A bundle's key is BUNDLE_KEY; its value the entries one after
 * another, each [key's length: 1 byte][value's length: 4 bytes, little
 * endian][key][value], an entry being what would have been a message
 * (a span under its trace, a trace_move). */
#ifndef KMON_TRACE_BUNDLE_H
#define KMON_TRACE_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUNDLE_KEY "kmon-bundle/1"
/* A bundle this large is sent at once: Kafka's default largest message
 * is 1 MB; more would gain nothing a message costs. */
#define BUNDLE_BYTES (64 * 1024)

struct bundles;

/* Sends the bundle of partition: len bytes at value. */
typedef void (*bundle_send_fn)(int32_t partition, const char *value, size_t len,
			       void *ctx);

/* A bundle for each of partitions partitions, each sent through send. */
struct bundles *bundles__new(int partitions, bundle_send_fn send, void *ctx);
void bundles__free(struct bundles *b); /* NULL-safe; sends nothing */
/* An entry for partition (a bundle that would pass BUNDLE_BYTES is sent
 * first); false for a partition out of range or a key too long, which
 * the caller sends alone. */
bool bundles__add(struct bundles *b, int32_t partition, const char *key,
		  size_t key_len, const char *value, size_t len);
/* Every bundle that holds an entry, sent and emptied (NULL-safe). */
void bundles__send(struct bundles *b);

/* Whether a message's key says it is a bundle. */
bool bundle__is(const void *key, size_t key_len);

struct bundle_entry {
	const char *key, *value;
	size_t key_len, len;
};

/* The entry at *at in a bundle that ends at end, *at moved past it:
 * 1, 0 at the end, -1 where the bytes left are no entry (cut short). */
int bundle__next(const char **at, const char *end, struct bundle_entry *e);

#endif
