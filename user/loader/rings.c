// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "loader/rings.h"

#define RINGS_MAX 16

struct ring {
	int map_fd;
	ring_buffer_sample_fn fn;
	void *ctx;
	const void *owner;
};

struct rings {
	struct ring_buffer *rb; /* NULL until the first ring */
	struct ring ring[RINGS_MAX];
	int n;
	const void *owner; /* tags the rings added while it is set */
};

struct rings *rings__new(void)
{
	return xcalloc(1, sizeof(struct rings));
}

void rings__set_owner(struct rings *rs, const void *owner)
{
	rs->owner = owner;
}

int rings__add(struct rings *rs, int map_fd, ring_buffer_sample_fn fn,
	       void *ctx)
{
	int err;

	if (rs->n == RINGS_MAX) {
		log_error("failed to add a ringbuf: more than %d", RINGS_MAX);
		return -ENOSPC;
	}
	if (!rs->rb) {
		rs->rb = ring_buffer__new(map_fd, fn, ctx, NULL);
		err = rs->rb ? 0 : -errno;
	} else {
		err = ring_buffer__add(rs->rb, map_fd, fn, ctx);
	}
	if (err) {
		log_error("failed to add a ringbuf: %s", strerror(-err));
		return err;
	}
	rs->ring[rs->n++] = (struct ring){ map_fd, fn, ctx, rs->owner };
	return 0;
}

/* libbpf cannot remove a ring from a ring_buffer: drain everything while
 * the owners are alive, then rebuild the set from the others. */
void rings__forget(struct rings *rs, const void *owner)
{
	struct ring keep[RINGS_MAX];
	int nkeep = 0, n;
	const void *saved;

	if (!rs)
		return; /* at exit the set goes first: nothing to rebuild */
	n = rs->n;
	saved = rs->owner;
	for (int i = 0; i < n; i++)
		if (rs->ring[i].owner != owner)
			keep[nkeep++] = rs->ring[i];
	if (nkeep == n)
		return;
	ring_buffer__consume(rs->rb);
	ring_buffer__free(rs->rb);
	rs->rb = NULL;
	rs->n = 0;
	for (int i = 0; i < nkeep; i++) {
		rs->owner = keep[i].owner;
		rings__add(rs, keep[i].map_fd, keep[i].fn, keep[i].ctx);
	}
	rs->owner = saved;
}

int rings__poll(struct rings *rs, int timeout_ms)
{
	if (!rs->rb) {
		struct timespec ts = { timeout_ms / 1000,
				       (timeout_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL); /* a signal cuts it short */
		return 0;
	}
	return ring_buffer__poll(rs->rb, timeout_ms);
}

void rings__consume(struct rings *rs)
{
	if (rs->rb)
		ring_buffer__consume(rs->rb);
}

void rings__free(struct rings *rs)
{
	if (!rs)
		return;
	ring_buffer__free(rs->rb);
	free(rs);
}
