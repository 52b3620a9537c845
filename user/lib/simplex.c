// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Minimising a smooth function of two variables without its gradient:
 * the occupancy fits' likelihoods over two log service rates. */
#include <math.h>
#include <string.h>

#include "lib/simplex.h"

/* Nelder-Mead in two dimensions from x (first steps of `step`); x becomes
 * the best point. Returns its cost. */
double simplex2_minimise(simplex2_cost cost, const void *ctx, double *x,
			 double step)
{
	double p[3][2], f[3], c[2], r[2], q[2], fr, fq;
	int i, j, best, worst, mid, iter;

	for (i = 0; i < 3; i++) {
		p[i][0] = x[0] + (i == 1) * step;
		p[i][1] = x[1] + (i == 2) * step;
		f[i] = cost(ctx, p[i]);
	}
	for (iter = 0; iter < 400; iter++) {
		best = worst = 0;
		for (i = 1; i < 3; i++) {
			if (f[i] < f[best])
				best = i;
			if (f[i] >= f[worst])
				worst = i;
		}
		if (best == worst)
			worst = (best + 1) % 3;
		mid = 3 - best - worst;
		/* converged: costs within 1e-8, points within 1e-5 in log-rate
		 * (log-rates: to 1e-5, far below a fit's sampling error) */
		if (f[worst] - f[best] <= 1e-8 * (1 + fabs(f[best])) &&
		    fabs(p[worst][0] - p[best][0]) < 1e-5 &&
		    fabs(p[worst][1] - p[best][1]) < 1e-5)
			break;
		for (j = 0; j < 2; j++) {
			c[j] = (p[best][j] + p[mid][j]) / 2;
			r[j] = 2 * c[j] - p[worst][j];
		}
		fr = cost(ctx, r);
		if (fr < f[best]) { /* expand */
			for (j = 0; j < 2; j++)
				q[j] = 3 * c[j] - 2 * p[worst][j];
			fq = cost(ctx, q);
			memcpy(p[worst], fq < fr ? q : r, sizeof(q));
			f[worst] = fmin(fq, fr);
			continue;
		}
		if (fr < f[mid]) {
			memcpy(p[worst], r, sizeof(r));
			f[worst] = fr;
			continue;
		}
		/* contract, toward the better of worst and its reflection */
		for (j = 0; j < 2; j++)
			q[j] = (c[j] + (fr < f[worst] ? r[j] : p[worst][j])) /
			       2;
		fq = cost(ctx, q);
		if (fq < fmin(fr, f[worst])) {
			memcpy(p[worst], q, sizeof(q));
			f[worst] = fq;
			continue;
		}
		for (i = 0; i < 3; i++) /* shrink toward the best */
			if (i != best) {
				for (j = 0; j < 2; j++)
					p[i][j] = (p[i][j] + p[best][j]) / 2;
				f[i] = cost(ctx, p[i]);
			}
	}
	best = f[1] < f[0];
	if (f[2] < f[best])
		best = 2;
	memcpy(x, p[best], sizeof(p[best]));
	return f[best];
}
