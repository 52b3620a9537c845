// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bundles are kept per partition in growable buffers; the partitions
 * that hold entries are listed, so that a send looks at those only. */
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define ENTRY_HEAD 5 /* key's length (1), value's length (4) */

struct bundles {
	struct strbuf *by_partition;
	int32_t *filled; /* partitions whose bundle holds an entry */
	int nfilled, partitions;
	bundle_send_fn send;
	void *ctx;
};

struct bundles *bundles__new(int partitions, bundle_send_fn send, void *ctx)
{
	struct bundles *b = xcalloc(1, sizeof(*b));

	b->partitions = partitions > 0 ? partitions : 0;
	b->by_partition = xcalloc(b->partitions + 1, sizeof(struct strbuf));
	b->filled = xcalloc(b->partitions + 1, sizeof(int32_t));
	b->send = send;
	b->ctx = ctx;
	return b;
}

void bundles__free(struct bundles *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < b->partitions; i++)
		strbuf__free(&b->by_partition[i]);
	free(b->by_partition);
	free(b->filled);
	free(b);
}

static void send_one(struct bundles *b, int32_t partition)
{
	struct strbuf *sb = &b->by_partition[partition];

	b->send(partition, sb->buf, sb->len, b->ctx);
	sb->len = 0;
}

bool bundles__add(struct bundles *b, int32_t partition, const char *key,
		  size_t key_len, const char *value, size_t len)
{
	struct strbuf *sb;
	size_t size = ENTRY_HEAD + key_len + len;
	char *p;

	if (partition < 0 || partition >= b->partitions || key_len > 255 ||
	    len > UINT32_MAX)
		return false;
	sb = &b->by_partition[partition];
	if (sb->len && sb->len + size > BUNDLE_BYTES)
		send_one(b, partition); /* stays listed: filled again below */
	else if (!sb->len)
		b->filled[b->nfilled++] = partition;
	p = strbuf__room(sb, size);
	*p++ = (char)key_len;
	*p++ = (char)(len & 0xff);
	*p++ = (char)((len >> 8) & 0xff);
	*p++ = (char)((len >> 16) & 0xff);
	*p++ = (char)((len >> 24) & 0xff);
	memcpy(p, key, key_len);
	memcpy(p + key_len, value, len);
	strbuf__done(sb, p + key_len + len);
	return true;
}

void bundles__send(struct bundles *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < b->nfilled; i++)
		send_one(b, b->filled[i]);
	b->nfilled = 0;
}

bool bundle__is(const void *key, size_t key_len)
{
	return key && key_len == sizeof(BUNDLE_KEY) - 1 &&
	       memcmp(key, BUNDLE_KEY, key_len) == 0;
}

int bundle__next(const char **at, const char *end, struct bundle_entry *e)
{
	const unsigned char *p = (const unsigned char *)*at;
	size_t left = (size_t)(end - *at);

	if (!left)
		return 0;
	if (left < ENTRY_HEAD)
		return -1;
	e->key_len = p[0];
	e->len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 |
		 (size_t)p[4] << 24;
	left -= ENTRY_HEAD;
	if (e->key_len > left || e->len > left - e->key_len)
		return -1;
	e->key = *at + ENTRY_HEAD;
	e->value = e->key + e->key_len;
	*at = e->value + e->len;
	return 1;
}
