/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the daemon's parts share: the running config, the provider, the
 * exporter, and the ringbufs the main loop drains. */
#ifndef KMON_KMOND_H
#define KMON_KMOND_H

#include <bpf/libbpf.h>

#include "config.h"

struct exporter;
struct provider;

#define KMOND_MAX_RINGS 16

/* One ringbuf map the main loop drains, and who added it. */
struct kmond_ring {
	int map_fd;
	ring_buffer_sample_fn fn;
	void *ctx;
	const void *owner; /* the collector; NULL: the provider */
};

struct kmond {
	struct config cfg; /* the running configuration */
	struct provider *provider;
	struct exporter *exporter;
	struct ring_buffer *rb; /* every ringbuf kmond drains */
	struct kmond_ring rings[KMOND_MAX_RINGS]; /* what rb holds */
	int nrings;
	const void *ring_owner; /* tags the rings added while it is set */
	uint64_t reloads;
	uint64_t reload_failures;
};

/* Adds a ringbuf map to the ones the main loop drains. */
int kmond__add_ringbuf(struct kmond *k, int map_fd, ring_buffer_sample_fn fn,
		       void *ctx);

#endif
