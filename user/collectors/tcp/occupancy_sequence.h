/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The two-tier fit refined by the exact likelihood of the black box's own
 * sequence of arrivals and departures, which the kernel's load
 * accounting sees for the occupancy targets (each change of the number in
 * progress, with its time).
 *
 * Why: a window of 2000 consecutive requests holds a few busy periods, so
 * any fit that treats its response times, or its per-n sums, as
 * independent draws from the stationary law is thrown off by how those
 * busy periods fell (occupancy_given_n.h). The sequence itself has a
 * likelihood that accounts for all of it: between two events of the
 * black box, a tandem of two exponential servers is a Markov chain whose
 * only hidden part is how the n requests inside split between the tiers
 * (n2 at tier 2, n - n2 at tier 1); tier 1 moves one to tier 2 at rate
 * mu1 while it holds any, and a departure, the only thing seen, comes at
 * rate mu2 while tier 2 holds any. The forward algorithm over n2 gives
 * the likelihood of the whole sequence exactly, maximised over mu1 and
 * mu2 (the arrivals, Poisson and seen, say nothing of them); where the
 * window tells the tiers apart only loosely (the posterior reaches the
 * fold mu1 = mu2), the rho reported are their means over the posterior
 * this likelihood gives under a uniform prior (occupancy_sequence.c).
 * On simulated tandems (81 pairs x 30 windows of 2000 requests, the unit
 * test) the error is 0.022 on the higher tier, 0.031 on the lower, 0.041
 * in distance (the likeliest rates: 0.023, 0.032, 0.043), against 0.029,
 * 0.048 and 0.060 given n; it falls as 1 / sqrt(window) (8000 requests:
 * 0.014, 0.018, 0.024, bench/occupancy_sources), as the most one window
 * can tell. */
#ifndef KMON_OCCUPANCY_SEQUENCE_H
#define KMON_OCCUPANCY_SEQUENCE_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/tcp/occupancy_fit.h"

/* Requests inside beyond this are a stretch the likelihood skips (it
 * starts again from the stationary split when the number comes back). */
#define OCC_SEQ_MAX_N 256

/* One change of the number of the target's requests in progress. */
struct occ_step {
	uint64_t t_ns; /* monotonic */
	uint32_t n; /* in progress after it */
	int32_t delta; /* +1: an arrival, -1: a departure */
	/* a departure's own response time, ns >> TCP_LOAD_SQ_SHIFT
	 * (occupancy_order.h); 0 for an arrival */
	uint32_t own;
};

/* Refines f, a holding two-tier fit of the same requests at throughput
 * f->lambda, by the likelihood of steps (count of them, in order of
 * time): rho and rate replaced, delay_ns set (the fixed delay outside
 * the tiers, occupancy_sequence.c, 0 when none is kept), the rest kept.
 * A step whose n does not follow from the one before (a lost event)
 * starts the chain again. Returns 0, or -1 (f untouched) when the steps
 * hold fewer than OCC_MIN_SAMPLES departures. */
int occ__refine_sequence(const struct occ_step *steps, size_t count,
			 struct occ_fit *f);

/* Minus the log-likelihood of steps at service rates mu1, mu2 (per
 * second). Exposed for the unit test. */
double occ__sequence_nll(const struct occ_step *steps, size_t count, double mu1,
			 double mu2);

#endif
