// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tandem-queue fit behind `occupancy` records (see occupancy_fit.h).
 *
 * Times are scaled by the data's mean, so the rates the optimiser moves
 * are of order 1 whatever the service's speed. The optimiser is
 * Nelder-Mead on the logarithms of the rates: no derivatives to get
 * right, positive rates for free, and the likelihood is symmetric under
 * any order of the rates, so the fold where two rates are equal (an
 * Erlang: the hard case rho1 = rho2) is an ordinary point, not an edge. */
#include <math.h>
#include <string.h>

#include "collectors/tcp/occupancy_fit.h"

/* When the data is not a tandem's. A window of consecutive requests is
 * no independent sample: it holds a few busy periods, each many alike,
 * so its CV and its distance from the fitted curve spread far wider than
 * Kolmogorov's tables or the CV's standard error say. The limits are set
 * from the simulated tandems of the unit test (81 pairs x 30 windows of
 * 2000 requests, rho up to 0.9: CV up to 1.35, ks up to 0.23), so a true
 * tandem is not refused, while heavy tails (a lognormal of sigma 1.5, CV
 * 2.9; a Pareto) and shapes no sum of exponentials has (a narrow peak,
 * two modes: ks 0.33 to 0.51) are. */
#define OCC_CV_LIMIT 1.5
/* The slowest 2% of a sample count only as slower than the 98th
 * percentile's bucket (see censor_from): on the simulated tandems this
 * changes the error by under 0.003, on a loaded machine it keeps a few
 * descheduled requests from making a sample "heavy-tailed". */
#define OCC_CENSOR 0.02
#define OCC_KS_SLACK 0.22 /* plus Kolmogorov's 1% point, 1.63 / sqrt(n) */

/* One bucket that holds samples: its bounds (scaled) and its count. */
struct bin {
	double lo, hi;
	double n;
};

struct data {
	struct bin bins[HIST_BUCKETS];
	int nbins;
	int k;
	int evals;
};

/* (1 - e^-x) / x, with its limit 1 at x = 0: no cancellation for close
 * rates. */
static double one_minus_exp_over(double x)
{
	return x < 1e-9 ? 1 - x / 2 : -expm1(-x) / x;
}

/* Two phases in closed form, a <= b: with d = b - a,
 * P(T > t) = e^-at (b - a e^-dt) / d = e^-at (1 + a t (1 - e^-dt)/(dt)),
 * which stays exact as d -> 0 (the Erlang-2 e^-at (1 + at)). */
static double survival2(double a, double b, double t)
{
	double d;

	if (a > b) {
		d = a;
		a = b;
		b = d;
	}
	d = b - a;
	return exp(-a * t) * (1 + a * t * one_minus_exp_over(d * t));
}

/* k phases in a row: the row vector e_1 exp(Qt), Q upper bidiagonal with
 * -rate_i on the diagonal and rate_i above it; its sum is P(T > t).
 * Scaling and squaring of a Taylor series: Q is a generator, so once
 * scaled to a norm of 1/2 the series has only positive entries off the
 * diagonal and positive diagonal sums, and squaring positive matrices
 * keeps relative precision, even deep in the tail. */
static double survival_matrix(const double *rate, int k, double t)
{
	double a[OCC_MAX_TIERS][OCC_MAX_TIERS] = { { 0 } };
	double e[OCC_MAX_TIERS][OCC_MAX_TIERS] = { { 0 } };
	double term[OCC_MAX_TIERS][OCC_MAX_TIERS] = { { 0 } };
	double next[OCC_MAX_TIERS][OCC_MAX_TIERS] = { { 0 } };
	double top = 0, h, s = 0;
	int i, j, l, n, squarings = 0;

	for (i = 0; i < k; i++)
		if (rate[i] * t > top)
			top = rate[i] * t;
	while (top > 0.5 && squarings < 60) {
		top /= 2;
		squarings++;
	}
	h = ldexp(t, -squarings);
	for (i = 0; i < k; i++) {
		a[i][i] = -rate[i] * h;
		if (i + 1 < k)
			a[i][i + 1] = rate[i] * h;
	}
	/* e = I + a + a^2/2! + ...: 18 terms leave < 1e-20 at norm 1 */
	for (i = 0; i < k; i++)
		term[i][i] = e[i][i] = 1;
	for (n = 1; n <= 18; n++) {
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++) {
				next[i][j] = 0;
				for (l = 0; l < k; l++)
					next[i][j] += term[i][l] * a[l][j];
				next[i][j] /= n;
			}
		memcpy(term, next, sizeof(term));
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++)
				e[i][j] += term[i][j];
	}
	while (squarings--) {
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++) {
				next[i][j] = 0;
				for (l = 0; l < k; l++)
					next[i][j] += e[i][l] * e[l][j];
			}
		memcpy(e, next, sizeof(e));
	}
	for (j = 0; j < k; j++)
		s += e[0][j];
	return s;
}

double occ__survival(const double *rate, int k, double t)
{
	double s;

	if (t <= 0)
		return 1;
	if (isinf(t))
		return 0;
	if (k == 1)
		s = exp(-rate[0] * t);
	else if (k == 2)
		s = survival2(rate[0], rate[1], t);
	else
		s = survival_matrix(rate, k, t);
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

/* Minus the log-likelihood of the binned data at log-rates x. */
static double cost(struct data *d, const double *x)
{
	double rate[OCC_MAX_TIERS], ll = 0, p;
	int i;

	d->evals++;
	for (i = 0; i < d->k; i++) {
		if (x[i] > 300 || x[i] < -300)
			return HUGE_VAL;
		rate[i] = exp(x[i]);
	}
	for (i = 0; i < d->nbins; i++) {
		p = occ__survival(rate, d->k, d->bins[i].lo) -
		    occ__survival(rate, d->k, d->bins[i].hi);
		/* a sample the model calls impossible costs a lot, finitely */
		ll += d->bins[i].n * log(p > 1e-300 ? p : 1e-300);
	}
	return -ll;
}

/* Nelder-Mead from x (n dims, initial steps of `step`); x becomes the
 * best point. Returns its cost. */
static double minimise(struct data *d, double *x, int n, double step)
{
	double p[OCC_MAX_TIERS + 1][OCC_MAX_TIERS], f[OCC_MAX_TIERS + 1];
	double c[OCC_MAX_TIERS], r[OCC_MAX_TIERS], q[OCC_MAX_TIERS];
	double fr, fq;
	int i, j, best, worst, second, iter;

	for (i = 0; i <= n; i++) {
		memcpy(p[i], x, sizeof(double) * n);
		if (i)
			p[i][i - 1] += step;
		f[i] = cost(d, p[i]);
	}
	for (iter = 0; iter < 500 * n; iter++) {
		best = worst = 0;
		for (i = 1; i <= n; i++) {
			if (f[i] < f[best])
				best = i;
			if (f[i] > f[worst])
				worst = i;
		}
		second = best;
		for (i = 0; i <= n; i++)
			if (i != worst && f[i] > f[second])
				second = i;
		/* converged: costs within 1e-10, and the points within 1e-7
		 * in log-rate (a relative 1e-7 on each rate) */
		if (f[worst] - f[best] <= 1e-10 * (1 + fabs(f[best]))) {
			double size = 0;

			for (i = 0; i <= n; i++)
				for (j = 0; j < n; j++)
					size = fmax(size,
						    fabs(p[i][j] - p[best][j]));
			if (size < 1e-7)
				break;
		}
		for (j = 0; j < n; j++) {
			c[j] = 0;
			for (i = 0; i <= n; i++)
				if (i != worst)
					c[j] += p[i][j] / n;
		}
		for (j = 0; j < n; j++)
			r[j] = c[j] + (c[j] - p[worst][j]);
		fr = cost(d, r);
		if (fr < f[best]) { /* expand */
			for (j = 0; j < n; j++)
				q[j] = c[j] + 2 * (c[j] - p[worst][j]);
			fq = cost(d, q);
			if (fq < fr) {
				memcpy(p[worst], q, sizeof(double) * n);
				f[worst] = fq;
			} else {
				memcpy(p[worst], r, sizeof(double) * n);
				f[worst] = fr;
			}
			continue;
		}
		if (fr < f[second]) {
			memcpy(p[worst], r, sizeof(double) * n);
			f[worst] = fr;
			continue;
		}
		/* contract, toward the better of worst and its reflection */
		for (j = 0; j < n; j++)
			q[j] = fr < f[worst] ?
				       c[j] + 0.5 * (r[j] - c[j]) :
				       c[j] + 0.5 * (p[worst][j] - c[j]);
		fq = cost(d, q);
		if (fq < fmin(fr, f[worst])) {
			memcpy(p[worst], q, sizeof(double) * n);
			f[worst] = fq;
			continue;
		}
		/* shrink toward the best */
		for (i = 0; i <= n; i++) {
			if (i == best)
				continue;
			for (j = 0; j < n; j++)
				p[i][j] = p[best][j] +
					  0.5 * (p[i][j] - p[best][j]);
			f[i] = cost(d, p[i]);
		}
	}
	best = 0;
	for (i = 1; i <= n; i++)
		if (f[i] < f[best])
			best = i;
	memcpy(x, p[best], sizeof(double) * n);
	return f[best];
}

/* Starting points, as log-rates for data of mean 1 and squared CV v:
 * the k equal rates of an Erlang (k / mean each), and one slow phase
 * holding most of the mean beside k-1 fast ones. For two phases, the
 * rates whose two moments match the data's replace the second. */
static void starts(int k, double v, double x[2][OCC_MAX_TIERS])
{
	double slow = sqrt(v > 0.99 ? 0.99 : v), disc;
	int i;

	for (i = 0; i < k; i++) {
		x[0][i] = log(k);
		x[1][i] = log((k - 1) / (1 - slow));
	}
	x[1][0] = -log(slow);
	/* 1/a + 1/b = 1 and 1/a^2 + 1/b^2 = v */
	disc = 2 * v - 1;
	if (k == 2 && disc > 0 && disc < 1) {
		x[1][0] = -log((1 + sqrt(disc)) / 2);
		x[1][1] = -log((1 - sqrt(disc)) / 2);
	}
}

static double mid(uint32_t b)
{
	return ((double)hist__bucket_low(b) + (double)hist__bucket_high(b)) / 2;
}

/* The largest distance between the observed CDF and the fitted one, at
 * the bounds of the buckets that hold samples: between them the observed
 * CDF is flat and the fitted one monotone, so these are all the extremes. */
static double ks_distance(const struct data *d, const double *rate, double n)
{
	double seen = 0, worst = 0, fit;
	int i;

	for (i = 0; i < d->nbins; i++) {
		fit = 1 - occ__survival(rate, d->k, d->bins[i].lo);
		worst = fmax(worst, fabs(fit - seen / n));
		seen += d->bins[i].n;
		fit = 1 - occ__survival(rate, d->k, d->bins[i].hi);
		worst = fmax(worst, fabs(fit - seen / n));
	}
	return worst;
}

/* The first bucket of the slowest samples, OCC_CENSOR of them at most:
 * they count only as "slower than its bound". A few requests delayed by
 * something that is no tier (a descheduled thread, a retransmission)
 * would otherwise pull the rates; a tail that is the tiers' own loses
 * little by it. HIST_BUCKETS: none. */
static uint32_t censor_from(const uint64_t *buckets, double n)
{
	double top = 0;
	uint32_t b = HIST_BUCKETS;

	while (b > 0 && top + (double)buckets[b - 1] <= OCC_CENSOR * n)
		top += (double)buckets[--b];
	return b;
}

static int refuse(struct occ_fit *out, const char *why)
{
	out->ok = 0;
	out->why = why;
	return -1;
}

int occ__fit(const uint64_t *buckets, double lambda, int tiers,
	     struct occ_fit *out)
{
	static struct data d; /* 16 KiB of bins: not on the stack */
	double x[2][OCC_MAX_TIERS], fx[2], sum = 0, sq = 0, n = 0, var;
	double rate[OCC_MAX_TIERS], tmp;
	int i, j, pick;
	uint32_t b, cut;

	memset(out, 0, sizeof(*out));
	/* not judged until occ__check_bare */
	out->bare_ks = NAN;
	out->bare_dispersion = NAN;
	out->tiers = tiers;
	out->lambda = lambda;
	if (tiers < 1 || tiers > OCC_MAX_TIERS)
		return refuse(out, "tiers out of range");
	for (b = 0; b < HIST_BUCKETS; b++)
		n += (double)buckets[b];
	out->samples = (uint64_t)n;
	if (n < OCC_MIN_SAMPLES)
		return refuse(out, "too few samples");
	if (!(lambda > 0))
		return refuse(out, "no throughput");
	cut = censor_from(buckets, n);
	/* winsorized: the censored samples count at the cut */
	for (b = 0; b < HIST_BUCKETS; b++)
		sum += (double)buckets[b] *
		       (b < cut ? mid(b) : (double)hist__bucket_low(cut));
	out->mean_ns = sum / n;
	if (!(out->mean_ns > 0))
		return refuse(out, "zero latency");

	d.nbins = 0;
	d.k = tiers;
	d.evals = 0;
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!buckets[b])
			continue;
		tmp = (b < cut ? mid(b) : (double)hist__bucket_low(cut)) -
		      out->mean_ns;
		sq += (double)buckets[b] * tmp * tmp;
		if (b >= cut)
			continue;
		/* integer ns: bucket b holds [low, high + 1) of a continuum */
		d.bins[d.nbins].lo = (double)hist__bucket_low(b) / out->mean_ns;
		d.bins[d.nbins].hi =
			((double)hist__bucket_high(b) + 1) / out->mean_ns;
		d.bins[d.nbins].n = (double)buckets[b];
		d.nbins++;
	}
	if (cut < HIST_BUCKETS) { /* the censored: slower than the cut */
		d.bins[d.nbins].lo =
			(double)hist__bucket_low(cut) / out->mean_ns;
		d.bins[d.nbins].hi = HUGE_VAL;
		d.bins[d.nbins].n = 0;
		for (b = cut; b < HIST_BUCKETS; b++)
			d.bins[d.nbins].n += (double)buckets[b];
		d.nbins++;
	}
	var = sq / (n - 1) / (out->mean_ns * out->mean_ns);
	out->cv = sqrt(var);
	/* a sum of exponentials has a CV of at most 1 */
	if (out->cv > OCC_CV_LIMIT)
		return refuse(out, "cv above 1");

	starts(tiers, var, x);
	for (i = 0; i < 2; i++) {
		fx[i] = minimise(&d, x[i], tiers, 0.5);
		/* once more from where it stopped: Nelder-Mead can stall on
		 * a ridge, a fresh simplex cannot stall there again */
		fx[i] = minimise(&d, x[i], tiers, 0.1);
	}
	pick = fx[1] < fx[0];
	for (i = 0; i < tiers; i++)
		rate[i] = exp(x[pick][i]);
	/* slowest phase first: the highest utilization first */
	for (i = 0; i < tiers; i++)
		for (j = i + 1; j < tiers; j++)
			if (rate[j] < rate[i]) {
				tmp = rate[i];
				rate[i] = rate[j];
				rate[j] = tmp;
			}
	out->evals = d.evals;
	out->ks = ks_distance(&d, rate, n);
	out->ks_limit = OCC_KS_SLACK + 1.63 / sqrt(n);
	for (i = 0; i < tiers; i++)
		out->rate[i] = rate[i] / out->mean_ns * 1e9;
	for (i = 0; i < tiers; i++)
		out->rho[i] = lambda / (out->rate[i] + lambda);
	if (out->ks > out->ks_limit)
		return refuse(out, "poor fit");
	out->ok = 1;
	return 0;
}

void occ__set_service_rates(struct occ_fit *f, double mu1, double mu2)
{
	double mu[2] = { fmin(mu1, mu2), fmax(mu1, mu2) };

	for (int i = 0; i < 2; i++) {
		f->rate[i] = mu[i] - f->lambda;
		f->rho[i] = f->lambda / mu[i];
	}
}

/* Kolmogorov's 1% point is 1.63 / sqrt(n); the slack is for the rates,
 * fitted on the whole window, not on these requests. With the rates of
 * the sequence's fit, on simulated tandems (the unit test, 81 pairs x 5
 * windows, with and without a delay of 250 us) the distance passed
 * 1.63 / sqrt(n) by 0.002 at most; with the histogram's rates alone by
 * up to 0.09, so only the sequence's fits are checked. */
#define EMPTY_KS_SLACK 0.02
/* Fewer requests that found none inside than this tell nothing. */
#define EMPTY_MIN 30
/* The bare services' dispersion in standard errors above the fitted
 * law's: its sampling law is skewed to the right (squares of
 * exponentials), so more than the normal's 1% point. */
#define BARE_DISPERSION_LIMIT 3.0
/* Above the normal's 5% point the services may be more dispersed than
 * exponential ones, if too little to refuse: then what the window tells
 * least, how the load splits between the tiers, is not to be trusted
 * (lognormal services of equal tiers, sigma 1, read 0.66 and 0.33 for
 * 0.55 and 0.52 by the tiers' clocks, at 2.8 here), while their sum is
 * held by the bare services' mean: each interval reaches over the tiers'
 * common value at that sum, rho1 + rho2, plus lambda x the fixed delay
 * where that is the tiers' own (0.59 and 0.29 with a delay of 0.86 ms,
 * at 2.1, for 0.49 and 0.48). */
#define BARE_DISPERSION_SUSPECT 1.64

static void reach_to_common(struct occ_fit *f)
{
	double sum = f->rho[0] + f->rho[1];
	double delay_rho = f->lambda * (double)f->delay_ns / 1e9;

	if (!f->interval || f->tiers != 2)
		return;
	f->rho_lo[0] = fmin(f->rho_lo[0], sum / 2);
	f->rho_hi[1] = fmax(f->rho_hi[1], fmin(1, (sum + delay_rho) / 2));
}

/* Raw moments E[T^k], k = 0..4, of T = S1 + ... + Sk, Si exponential of
 * rate mu[i]: each Si's are k! / mu^k, and those of a sum of independent
 * terms are the binomial convolution of theirs. */
static void hypoexp_moments(const double *mu, int tiers, double *m)
{
	static const double binom[5][5] = {
		{ 1 }, { 1, 1 }, { 1, 2, 1 }, { 1, 3, 3, 1 }, { 1, 4, 6, 4, 1 }
	};
	double s[5], sum[5];

	m[0] = 1;
	for (int k = 1; k < 5; k++)
		m[k] = 0;
	for (int i = 0; i < tiers; i++) {
		s[0] = 1;
		for (int k = 1; k < 5; k++)
			s[k] = s[k - 1] * k / mu[i];
		for (int k = 0; k < 5; k++) {
			sum[k] = 0;
			for (int j = 0; j <= k; j++)
				sum[k] += binom[k][j] * m[j] * s[k - j];
		}
		memcpy(m, sum, sizeof(sum));
	}
}

/* How far the bare services' squared coefficient of variation lies above
 * the fitted law's, in standard errors of the latter (the delta method on
 * g = m2 / m1^2 with the law's own moments up to the fourth). Their
 * Kolmogorov distance hardly sees a tail: lognormal services (sigma 1,
 * CV 1.31) passed it on 150 to 300 requests while their fit read the
 * higher tier 0.10 off; their dispersion is what sets them apart. */
static double bare_dispersion(const uint64_t *empty, double n, const double *mu,
			      int tiers, double delay)
{
	double m[5], x1 = 0, x2 = 0, mid, t, dg_dm1, dg_dm2, var;

	for (uint32_t bk = 0; bk < HIST_BUCKETS; bk++) {
		if (!empty[bk])
			continue;
		mid = ((double)hist__bucket_low(bk) +
		       (double)hist__bucket_high(bk)) /
		      2;
		t = fmax(mid - delay, 0);
		x1 += (double)empty[bk] * t / n;
		x2 += (double)empty[bk] * t * t / n;
	}
	hypoexp_moments(mu, tiers, m);
	/* g(m1, m2) = m2 / m1^2; the sample means of T and T^2 stray with
	 * the covariance of T and T^2 over n */
	dg_dm1 = -2 * m[2] / (m[1] * m[1] * m[1]);
	dg_dm2 = 1 / (m[1] * m[1]);
	var = (dg_dm1 * dg_dm1 * (m[2] - m[1] * m[1]) +
	       dg_dm2 * dg_dm2 * (m[4] - m[2] * m[2]) +
	       2 * dg_dm1 * dg_dm2 * (m[3] - m[1] * m[2])) /
	      n;
	return (x2 / (x1 * x1) - m[2] / (m[1] * m[1])) / sqrt(var);
}

int occ__check_bare(const uint64_t *empty, struct occ_fit *f)
{
	double mu[OCC_MAX_TIERS], n = 0, seen = 0, worst = 0, lo, hi, fit;
	double delay = (double)f->delay_ns;

	if (!f->ok)
		return -1;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++)
		n += (double)empty[b];
	f->bare_samples = (uint64_t)n;
	f->bare_ks = NAN;
	f->bare_dispersion = NAN;
	if (n < EMPTY_MIN)
		return 0;
	/* per ns: the bare services' rates mu_i, not mu_i - lambda */
	for (int i = 0; i < f->tiers; i++)
		mu[i] = (f->rate[i] + f->lambda) / 1e9;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		if (!empty[b])
			continue;
		lo = (double)hist__bucket_low(b) - delay;
		hi = (double)hist__bucket_high(b) + 1 - delay;
		fit = 1 - occ__survival(mu, f->tiers, lo);
		worst = fmax(worst, fabs(fit - seen / n));
		seen += (double)empty[b];
		fit = 1 - occ__survival(mu, f->tiers, hi);
		worst = fmax(worst, fabs(fit - seen / n));
	}
	f->bare_ks = worst;
	f->bare_dispersion = bare_dispersion(empty, n, mu, f->tiers, delay);
	if (worst > EMPTY_KS_SLACK + 1.63 / sqrt(n) ||
	    f->bare_dispersion > BARE_DISPERSION_LIMIT)
		return refuse(f, "service times not exponential");
	if (f->bare_dispersion > BARE_DISPERSION_SUSPECT)
		reach_to_common(f);
	return 0;
}
