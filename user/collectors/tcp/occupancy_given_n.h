/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The two-tier fit refined by what the kernel's load accounting knows of
 * each request: how many requests of the service were in progress when it
 * arrived (n).
 *
 * Why: a window of consecutive requests holds a few busy periods, so the
 * share of its requests that found n ahead strays far from the stationary
 * law's, and the histogram of all response times (occupancy_fit.h) with
 * it; on simulated tandems that is nearly all of the error (windows of
 * 2000 requests: distance 0.067, the same number of independent response
 * times: 0.021; bench/occupancy_sources). Given n, the law of a response
 * time depends only on the service rates mu_i and on how n splits between
 * the tiers:
 *  - n = 0: the request found both tiers idle, its time is S1 + S2, a
 *    hypoexponential of rates mu1, mu2, fitted on its own histogram;
 *  - n >= 1: mean and variance of the time of a request with n1 ahead at
 *    tier 1 and n - n1 at tier 2 come from its path through the two queues
 *    (a recurrence on the numbers left ahead); the split is hidden, taken
 *    with its stationary weights rho1^n1 rho2^(n - n1), and the per-n sums
 *    (count, sum, sum of squares) enter a Gaussian pseudo-likelihood.
 * On the simulated protocol this takes the lower layer's MAE from 0.055
 * to 0.045 and the distance from 0.067 to 0.059; the rest is the window's
 * own service times (with the split known too: 0.051). */
#ifndef KMON_OCCUPANCY_GIVEN_N_H
#define KMON_OCCUPANCY_GIVEN_N_H

#include <stdint.h>

#include "collectors/tcp/occupancy_fit.h"

/* Per-n sums for n below this; rarer requests are left out. */
#define OCC_GIVEN_N 64

struct occ_given_n {
	uint64_t empty[HIST_BUCKETS]; /* response times (ns) with n = 0 */
	double count[OCC_GIVEN_N];
	double sum[OCC_GIVEN_N]; /* s */
	double sum_sq[OCC_GIVEN_N]; /* s^2 */
};

/* Refines f, a holding two-tier fit of the same requests at throughput
 * f->lambda, with the given-n data: rho and rate replaced, the rest kept.
 * Returns 0, or -1 (f untouched) when g holds too few requests. */
int occ__refine_given_n(const struct occ_given_n *g, struct occ_fit *f);

/* Mean and second moment (s, s^2) of the response time of a request that
 * finds n1 requests at tier 1 and n2 at tier 2 (n1 + n2 < OCC_GIVEN_N),
 * for service rates mu1, mu2 per second. Exposed for the unit test. */
void occ__given_split(double mu1, double mu2, int n1, int n2, double *mean,
		      double *second);

#endif
