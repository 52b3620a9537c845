// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Credible intervals from a mixture of normals (occupancy_interval.h).
 * The quantiles by bisection on the mixture's CDF: a few hundred erfc, a
 * few microseconds, against the tens of milliseconds of the fit. */
#include <math.h>

#include "collectors/tcp/occupancy_interval.h"

void occ__mixture_add(struct occ_mixture *m, double w, double mean, double sd)
{
	if (m->n >= OCC_MIX_MAX || !(w > 0) || !(sd > 0) || !isfinite(mean))
		return;
	m->w[m->n] = w;
	m->mean[m->n] = mean;
	m->sd[m->n] = sd;
	m->n++;
}

/* The mixture's weight below x. */
static double cdf(const struct occ_mixture *m, double x)
{
	double s = 0;

	for (int i = 0; i < m->n; i++)
		s += m->w[i] * 0.5 *
		     erfc((m->mean[i] - x) / (m->sd[i] * M_SQRT2));
	return s;
}

/* The x below which the mixture holds weight p. */
static double quantile(const struct occ_mixture *m, double p)
{
	double lo = HUGE_VAL, hi = -HUGE_VAL, mid;

	for (int i = 0; i < m->n; i++) {
		lo = fmin(lo, m->mean[i] - 10 * m->sd[i]);
		hi = fmax(hi, m->mean[i] + 10 * m->sd[i]);
	}
	hi = fmin(hi, 0);
	/* a relative 1e-6 in rho: far below any interval's width */
	while (hi - lo > 1e-6) {
		mid = (lo + hi) / 2;
		if (cdf(m, mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int occ__mixture_interval(const struct occ_mixture *m, double level, double *lo,
			  double *hi)
{
	double below = m->n ? cdf(m, 0) : 0, tail = (1 - level) / 2;

	if (!(below > 0))
		return -1;
	*lo = exp(quantile(m, tail * below));
	*hi = exp(quantile(m, (1 - tail) * below));
	return 0;
}
