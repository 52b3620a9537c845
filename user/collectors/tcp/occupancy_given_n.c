// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The given-n refinement of the two-tier fit (see occupancy_given_n.h). */
#include <math.h>
#include <string.h>

#include "collectors/tcp/occupancy_given_n.h"
#include "lib/simplex.h"

#define N OCC_GIVEN_N

/* m[a][b], s[a][b]: mean and second moment of the time left to a request
 * with a requests at tier 1 up to and with it (a = 0: it is at tier 2)
 * and b at tier 2 ahead of it (with it, when a = 0). Tier 1 serves at mu1
 * while a > 0, tier 2 at mu2 while b > 0; the first of the two to finish
 * moves the state to (a - 1, b + 1) or (a, b - 1), so a + b never grows
 * and a table of a + b <= N holds every path. */
struct moments {
	double m[N + 1][N + 1], s[N + 1][N + 1];
};

/* The table up to a + b <= top. */
static void moments(struct moments *t, double mu1, double mu2, int top)
{
	int a, b;

	for (b = 0; b <= top; b++) { /* at tier 2: Erlang b of rate mu2 */
		t->m[0][b] = b / mu2;
		t->s[0][b] = b * (b + 1.0) / (mu2 * mu2);
	}
	for (a = 1; a <= top; a++)
		for (b = 0; a + b <= top; b++) {
			/* the first step takes an exponential time of rate q */
			double q = mu1 + (b ? mu2 : 0), p = mu1 / q;
			double m = p * t->m[a - 1][b + 1],
			       s = p * t->s[a - 1][b + 1];

			if (b) {
				m += (1 - p) * t->m[a][b - 1];
				s += (1 - p) * t->s[a][b - 1];
			}
			t->m[a][b] = 1 / q + m;
			t->s[a][b] = 2 / (q * q) + 2 / q * m + s;
		}
}

void occ__given_split(double mu1, double mu2, int n1, int n2, double *mean,
		      double *second)
{
	static struct moments t;

	moments(&t, mu1, mu2, N);
	*mean = t.m[n1 + 1][n2];
	*second = t.s[n1 + 1][n2];
}

struct data {
	const struct occ_given_n *g;
	double lambda;
	int top; /* the largest n with requests, plus 1 */
	struct moments t;
};

/* Minus the log-likelihood of the n = 0 histogram (S1 + S2) plus minus
 * the Gaussian pseudo-log-likelihood of the per-n sums, at log service
 * rates x. */
static double cost(struct data *d, const double *x)
{
	const struct occ_given_n *g = d->g;
	double mu[2], f = 0, p, ratio;
	uint32_t b;
	int n, n1, k;

	if (fabs(x[0]) > 60 || fabs(x[1]) > 60)
		return HUGE_VAL;
	mu[0] = exp(x[0]);
	mu[1] = exp(x[1]);
	/* an open queue at rho >= 1 has no stationary law */
	if (d->lambda >= mu[0] || d->lambda >= mu[1])
		return HUGE_VAL;
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!g->empty[b])
			continue;
		/* integer ns: bucket b holds [low, high + 1) */
		p = occ__survival(mu, 2, hist__bucket_low(b) * 1e-9) -
		    occ__survival(mu, 2, (hist__bucket_high(b) + 1) * 1e-9);
		f -= (double)g->empty[b] * log(p > 1e-300 ? p : 1e-300);
	}
	moments(&d->t, mu[0], mu[1], d->top);
	/* rho1 / rho2; the weights rho1^n1 rho2^(n - n1), scaled by the
	 * larger rho^n, are powers of a ratio at most 1 */
	ratio = mu[1] / mu[0];
	for (n = 1; n < N; n++) {
		double w = 1, sw = 0, m = 0, s = 0, v,
		       r = ratio > 1 ? 1 / ratio : ratio;

		if (!g->count[n])
			continue;
		/* k from the split the larger rho favours: weight r^k */
		for (k = 0; k <= n; k++, w *= r) {
			n1 = ratio > 1 ? n - k : k;
			sw += w;
			m += w * d->t.m[n1 + 1][n - n1];
			s += w * d->t.s[n1 + 1][n - n1];
		}
		m /= sw;
		s /= sw;
		v = s - m * m;
		if (!(v > 0))
			return HUGE_VAL;
		f += 0.5 *
		     (g->count[n] * log(v) +
		      (g->sum_sq[n] - 2 * m * g->sum[n] + g->count[n] * m * m) /
			      v);
	}
	return f;
}

/* The cost at x for simplex2_minimise. */
static double data_cost(const void *d, const double *x)
{
	return cost((struct data *)d, x);
}

int occ__refine_given_n(const struct occ_given_n *g, struct occ_fit *f)
{
	static struct data d; /* 66 KiB of tables: not on the stack */
	double total = 0, lam = f->lambda, x[3][2], fx, best = HUGE_VAL;
	double mu[2] = { 0, 0 };
	int i;

	if (f->tiers != 2 || !f->ok)
		return -1;
	d.top = 1;
	for (i = 0; i < N; i++) {
		total += g->count[i];
		if (g->count[i])
			d.top = i + 1;
	}
	if (total < OCC_MIN_SAMPLES)
		return -1;
	d.g = g;
	d.lambda = lam;
	/* From the histogram fit's rates, in both orders: given n, the law
	 * is not the same when the tiers swap. And from their mean. */
	x[0][0] = x[1][1] = log(f->rate[0] + lam);
	x[0][1] = x[1][0] = log(f->rate[1] + lam);
	x[2][0] = x[2][1] = (x[0][0] + x[0][1]) / 2;
	for (i = 0; i < 3; i++) {
		simplex2_minimise(data_cost, &d, x[i], 0.3);
		fx = simplex2_minimise(data_cost, &d, x[i], 0.05);
		if (fx < best) {
			best = fx;
			mu[0] = exp(x[i][0]);
			mu[1] = exp(x[i][1]);
		}
	}
	if (!(best < HUGE_VAL))
		return -1;
	occ__set_service_rates(f, mu[0], mu[1]);
	return 0;
}
