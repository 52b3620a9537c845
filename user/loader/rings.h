/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The set of BPF ringbufs the main loop drains, each tagged with its owner
 * (a collector, or the provider) so an owner that stops takes its rings
 * with it. */
#ifndef KMON_RINGS_H
#define KMON_RINGS_H

#include <bpf/libbpf.h>

struct rings;

struct rings *rings__new(void); /* NULL when out of memory */
/* Tags the rings added from now on (NULL: no owner). */
void rings__set_owner(struct rings *rs, const void *owner);
/* Adds a ringbuf map. Returns 0 or -errno (logged). */
int rings__add(struct rings *rs, int map_fd, ring_buffer_sample_fn fn,
	       void *ctx);
/* Drains every ring, then drops owner's rings from the set, so no poll
 * calls back into an owner that is gone. NULL-safe. */
void rings__forget(struct rings *rs, const void *owner);
/* Waits up to timeout_ms for events and handles them; -EINTR is not an
 * error. Returns what ring_buffer__poll returns (0 with no ring). */
int rings__poll(struct rings *rs, int timeout_ms);
/* Handles every event there is now, without waiting. */
void rings__consume(struct rings *rs);
void rings__free(struct rings *rs); /* NULL-safe */

#endif
