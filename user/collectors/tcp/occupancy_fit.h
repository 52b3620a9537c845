/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Estimated utilization of the hidden tiers behind one endpoint, from the
 * histogram of its response times and its throughput.
 *
 * Model: a tandem of `tiers` M/M/1 queues. With Poisson arrivals at rate
 * lambda, the time spent at tier i is exponential with rate mu_i - lambda,
 * independent of the other tiers (Jackson network), so a response time is
 * hypoexponential: the sum of `tiers` exponentials. The rates are fitted
 * by maximum likelihood on the binned data (each bucket's probability is
 * a difference of the model's CDF at its bounds), and each tier's
 * utilization follows: rho_i = lambda / mu_i = lambda / (rate_i + lambda).
 *
 * The response times say nothing about which tier is which (a sum is the
 * same in any order), so rho comes sorted from highest to lowest. A
 * hypoexponential has a coefficient of variation of at most 1: data above
 * that (beyond sampling noise), or data the fitted curve does not follow,
 * get no rho but the reason. */
#ifndef KMON_OCCUPANCY_FIT_H
#define KMON_OCCUPANCY_FIT_H

#include <stdint.h>

#include "lib/histogram.h"

#define OCC_MAX_TIERS 4
/* Fewer samples than this give no rho ("too few samples"): too few to
 * tell a tandem from what is not one. At 50 a heavy tail (a tenth of
 * the requests 100 times slower) was taken for a tandem in a slow
 * guest's interval of 53 (occupancy_refuse); at 200 the tail holds about
 * 20 of them, past the 2% the fit censors. */
#define OCC_MIN_SAMPLES 200

struct occ_fit {
	int ok; /* rho holds; else why says what failed */
	const char *why;
	int tiers;
	double rho[OCC_MAX_TIERS]; /* sorted, highest first */
	int interval; /* rho_lo and rho_hi hold */
	/* the credible interval of each rho (occupancy_interval.h's
	 * OCC_LEVEL), same order */
	double rho_lo[OCC_MAX_TIERS], rho_hi[OCC_MAX_TIERS];
	double rate[OCC_MAX_TIERS]; /* mu_i - lambda, per second, same order */
	uint64_t samples;
	double lambda; /* per second, as given */
	double mean_ns;
	double cv; /* coefficient of variation of the data, the slowest 2%
		     * counted at the 98th percentile */
	double ks; /* goodness of fit: the largest distance between the
		     * fitted and the observed CDF at a bucket bound */
	double ks_limit; /* the largest ks that is accepted for these samples */
	int evals; /* likelihood evaluations the fit took */
	/* the check of the bare services (occ__check_bare): how many
	 * requests found none inside, and their distance from the law of
	 * S1 + ... + Sk (NAN: not judged) */
	uint64_t bare_samples;
	double bare_ks;
	/* their squared CV above the law's, in its standard errors */
	double bare_dispersion;
	uint64_t delay_ns; /* the fixed delay outside the tiers the
			    * sequence's fit found (occupancy_sequence.h),
			    * else 0 */
};

/* Fits buckets (histogram.h layout, HIST_BUCKETS counts) of response
 * times in ns, lambda in requests per second, tiers 1..OCC_MAX_TIERS.
 * Always fills *out; returns 0 when rho holds, -1 when it does not. */
int occ__fit(const uint64_t *buckets, double lambda, int tiers,
	     struct occ_fit *out);

/* Checks f, a holding fit, against the response times of the requests
 * that found none inside (histogram.h buckets, ns): those are the bare
 * services S1 + ... + Sk (and f->delay_ns), a hypoexponential of rates
 * mu_i, drawn independently of the window's busy periods, so Kolmogorov's
 * distance holds for them as it does not for the whole window. Where it
 * is too far f does not hold ("service times not exponential": fixed or
 * heavy-tailed services make a tandem the fit cannot tell). For rates
 * refined by the sequence (occupancy_sequence.h): the histogram's are
 * too loose for it. Returns -1 when f does not hold. */
int occ__check_bare(const uint64_t *empty, struct occ_fit *f);

/* Sets f's two tiers from their service rates mu1, mu2 (per second) at
 * throughput f->lambda: rate mu - lambda and rho = lambda / mu, the slower
 * tier (the higher rho) first. For the refinements of a two-tier fit. */
void occ__set_service_rates(struct occ_fit *f, double mu1, double mu2);

/* Survival P(T > t) of the sum of k exponentials with the given rates
 * (any order, equal rates allowed). Exposed for the unit test. */
double occ__survival(const double *rate, int k, double t);

#endif
