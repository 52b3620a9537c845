/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* I/Os whose completion the bio collector's program never ran for (see
 * bpf/bio_lost.bpf.c): found when a request has been in flight an
 * interval (bio.c), counted lost, forgotten. */
#ifndef KMON_BIO_LOST_H
#define KMON_BIO_LOST_H

#include <stdint.h>

#include "loader/probe.h"

struct bio_lost;

/* The hook of the lost walk, optional: a run over the in-flight map. */
/* clang-format off */
#define BIO_LOST_HOOK                                                       \
	{ "lost_walk", { { ATTACH_RUN, "bio_find_lost", "bio_inflight" } },  \
	  1, .optional = true,                                              \
	  .feature = "I/Os whose completion the kernel skipped are not "    \
		     "counted lost" }
/* clang-format on */

/* hook: BIO_LOST_HOOK; inflight_fd: the collector's bio_inflight map.
 * NULL (said once) when the kernel refuses the program: the count is
 * then missing, nothing else. */
struct bio_lost *bio_lost__new(const struct hook *hook, int inflight_fd);
void bio_lost__free(struct bio_lost *l); /* NULL-safe */
/* Has the entries of freed requests deleted; returns how many, so far. */
uint64_t bio_lost__sweep(struct bio_lost *l);

#endif
