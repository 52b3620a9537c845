/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Whether a target's requests leave in the order they came, as they do
 * from a tandem of FIFO single servers, the model of occupancy_fit.h.
 *
 * Each end's step carries its request's own response time (its start
 * and end on its connection, bpf/tcp/tcp_load.h); the sequence of steps
 * gives the same departures paired with the arrivals in order (the k-th
 * to leave with the k-th to come). The sums of both are the same, and by
 * the rearrangement inequality the paired squares sum to less unless the
 * requests left in order: their gap, over the own sum, is the share by
 * which requests overtook each other (0 for FIFO tiers). A front that
 * serves requests side by side (a thread per connection, an event loop)
 * or a hand-off delay that varies lets them overtake. */
#ifndef KMON_OCCUPANCY_ORDER_H
#define KMON_OCCUPANCY_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/tcp/occupancy_sequence.h"

/* The arrival times of the requests in progress, first come first. */
struct occ_order {
	uint64_t *inside;
	size_t n, cap;
	bool known; /* the steps before were whole */
};

void occ_order__free(struct occ_order *o); /* the arrays; NULL-safe */
/* Pairs the departures of an interval's steps (count, in order of time;
 * whole: none left out) with the arrivals in order, those in progress
 * at its start first, and keeps those in progress at its end. *sq: the
 * sum of the paired response times squared, each as the kernel squares
 * it (ns >> shift, in seconds^2). Returns the departures paired, or -1
 * when the pairing is not known (steps left out, now or before, unless
 * none was in progress before the first step). */
long occ_order__pair(struct occ_order *o, const struct occ_step *s,
		     size_t count, bool whole, int shift, double *sq);

#endif
