/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the daemon's parts share: the running config, the provider, the
 * exporter, and the ringbufs the main loop drains. */
#ifndef KMON_KMOND_H
#define KMON_KMOND_H

#include <bpf/libbpf.h>

#include "config.h"

struct exporter;
struct provider;

struct kmond {
	struct config cfg; /* the running configuration */
	struct provider *provider;
	struct exporter *exporter;
	struct ring_buffer *rb; /* every ringbuf kmond drains */
	uint64_t reloads;
	uint64_t reload_failures;
};

/* Adds a ringbuf map to the ones the main loop drains. */
int kmond__add_ringbuf(struct kmond *k, int map_fd, ring_buffer_sample_fn fn,
		       void *ctx);

#endif
