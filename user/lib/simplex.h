/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef KMON_SIMPLEX_H
#define KMON_SIMPLEX_H

/* The function to minimise at point x[2]; ctx is the caller's. */
typedef double (*simplex2_cost)(const void *ctx, const double *x);

/* Nelder-Mead from x[2], first steps of `step`; x becomes the best point
 * found (converged, or after 400 rounds). Returns its cost. */
double simplex2_minimise(simplex2_cost cost, const void *ctx, double *x,
			 double step);

#endif
