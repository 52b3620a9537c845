/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The credible interval of a utilization from a posterior over its
 * logarithm given as a mixture of normals (what the sequence's fit
 * integrates, occupancy_sequence.c): the central interval of the
 * mixture's law, cut at rho < 1 (the prior is uniform on (0, 1)). */
#ifndef KMON_OCCUPANCY_INTERVAL_H
#define KMON_OCCUPANCY_INTERVAL_H

/* The credible level of the intervals `occupancy` records carry. */
#define OCC_LEVEL 0.90
#define OCC_MIX_MAX 16

struct occ_mixture {
	int n;
	double w[OCC_MIX_MAX], mean[OCC_MIX_MAX], sd[OCC_MIX_MAX];
};

/* Adds a normal of log rho (weight w > 0, sd > 0); beyond OCC_MIX_MAX
 * components, none. */
void occ__mixture_add(struct occ_mixture *m, double w, double mean, double sd);

/* The central `level` interval of rho = exp(X), X of the law m cut at
 * X < 0, into *lo and *hi. Returns -1 (nothing set) for an empty m or
 * one with no weight below rho 1. */
int occ__mixture_interval(const struct occ_mixture *m, double level, double *lo,
			  double *hi);

#endif
