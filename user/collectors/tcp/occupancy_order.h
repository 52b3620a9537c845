/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Whether a target's requests leave in the order they came, as they do
 * from a tandem of FIFO single servers, the model of occupancy_fit.h.
 *
 * Each end's step carries its request's own response time (its start
 * and end on its connection, bpf/tcp/tcp_load.h), so each request that
 * ended gives its arrival and its departure. Paired in order instead
 * (the k-th to come with the k-th to leave, both sorted), the same
 * times square to less unless the requests left in order (the
 * rearrangement inequality): the gap, over the own sum, is the share by
 * which requests overtook each other (0 for FIFO tiers). A front that
 * serves requests side by side (a thread per connection, an event loop)
 * or a hand-off delay that varies lets them overtake.
 *
 * The check needs no other step: not the arrivals', nor those of the
 * interval before, nor every step (any set of ends pairs alike), so it
 * holds for a first interval, and for one whose steps were lost. */
#ifndef KMON_OCCUPANCY_ORDER_H
#define KMON_OCCUPANCY_ORDER_H

#include <stddef.h>

#include "collectors/tcp/occupancy_sequence.h"

/* The ends among count steps (in order of time), each with own set (the
 * kernel's ns >> shift): the sums of their own response times squared
 * (*own_sq) and of the same departures paired in order with the same
 * arrivals (*paired_sq), in seconds^2. Returns how many ends were
 * paired (an end whose own time saturated is left out). */
size_t occ__order_sums(const struct occ_step *s, size_t count, int shift,
		       double *own_sq, double *paired_sq);

#endif
