// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where the occupancy estimator's error comes from (issue 17): the
 * published protocol on a simulated two-tier tandem (81 utilization pairs,
 * windows of consecutive requests, sorted pairs), with the same windows
 * fitted several ways, so each way differs from the shipped fit in one
 * thing only:
 *   shipped    occ__fit on the log-linear histogram, the window's throughput
 *   true-rate  the same with the true arrival rate (throughput noise)
 *   exact      maximum likelihood on the exact response times, no buckets
 *              (the histogram's resolution)
 *   iid        the shipped fit on independent draws from the stationary law
 *              (the windows' correlation: a window at rho 0.9 holds a few
 *              busy periods, each a run of alike response times)
 *   given-n    each response time given the number in progress when its
 *              request arrived (what the kernel's load accounting knows):
 *              the requests that found the system empty have the law of the
 *              bare service times, S1 + S2, fitted on their histogram; the
 *              others by the mean and variance of their time given n, a
 *              Gaussian pseudo-likelihood on per-n sums (count, sum, sum of
 *              squares), the tiers' split of n hidden (stationary weights)
 *   given-n1n2 the moments given the split itself (no black box knows it:
 *              a bound for the given-n idea)
 *   sequence   the likelihood of the window's sequence of arrivals and
 *              departures (occupancy_sequence.h): what the window holds
 *              about the tiers, what kmond reports when the interval's
 *              steps are whole
 *   bayes      (BAYES_GRID=G set, G >= 10) the posterior medians of the
 *              sorted utilizations under a uniform prior on (0, 1)^2, the
 *              same likelihood evaluated on a G x G grid: for utilizations
 *              drawn from that prior, no estimator that sees the window
 *              has a smaller mean absolute error per layer, so this is
 *              the most a window tells without knowing the protocol's
 *              grid. Slow: G = 100 takes about 1.5 s a window
 *   bench/occupancy_sources [WINDOWS_PER_PAIR [WINDOW [SEED]]]
 * Defaults 5, 2000, 17. Prints MAE of the higher and the lower layer and
 * the mean Euclidean distance, overall and by range of rho1 x rho2. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/histogram.h"
#include "lib/simplex.h"
#include "lib/xalloc.h"
#include "collectors/tcp/occupancy_fit.h"
#include "collectors/tcp/occupancy_sequence.h"

#define LAMBDA 100.0 /* per second; times below are in seconds */
#define WARMUP 5000
#define MAXN 64 /* per-n sums for n < MAXN; the rest is left out */

enum {
	SHIPPED,
	TRUE_RATE,
	EXACT,
	IID,
	GIVEN_N,
	GIVEN_SPLIT,
	SEQUENCE,
	BAYES,
	NWAYS
};
static const char *way_name[NWAYS] = { "shipped",  "true-rate", "exact",
				       "iid",	   "given-n",	"given-n1n2",
				       "sequence", "bayes" };

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	return splitmix64_next(&rng_state);
}

static double rng_exp(double rate)
{
	return -log(((rng_next() >> 11) + 1) * 0x1.0p-53) / rate;
}

struct sums {
	double c, s1, s2;
};

struct window {
	uint64_t hist[HIST_BUCKETS], iid[HIST_BUCKETS], empty[HIST_BUCKETS];
	struct sums n[MAXN], split[MAXN][MAXN];
	double *t; /* the exact response times */
	int nt;
	struct occ_step *steps; /* arrivals and departures, in time order */
	int nsteps;
	double lambda;
};

/* The tagged request's remaining time from (a requests at tier 1 up to and
 * with it, b at tier 2 ahead of it): mean m and second moment s, by the
 * first step (each step lowers a, or keeps a and lowers b). a = 0: it is
 * at tier 2, b-th in line. */
static double M[MAXN + 1][2 * MAXN + 1], S[MAXN + 1][2 * MAXN + 1];

static void moments(double mu1, double mu2)
{
	for (int b = 0; b <= 2 * MAXN; b++) {
		M[0][b] = b / mu2;
		S[0][b] = b * (b + 1.0) / (mu2 * mu2);
	}
	for (int a = 1; a <= MAXN; a++)
		for (int b = 0; b <= 2 * MAXN - a; b++) {
			double q = mu1 + (b ? mu2 : 0), p1 = mu1 / q;
			double p2 = 1 - p1, m = p1 * M[a - 1][b + 1], s;

			s = p1 * S[a - 1][b + 1];
			if (b) {
				m += p2 * M[a][b - 1];
				s += p2 * S[a][b - 1];
			}
			M[a][b] = 1 / q + m;
			S[a][b] = 2 / (q * q) + 2 / q * m + s;
		}
}

/* Gaussian pseudo-likelihood of the sums, mean m and second moment s. */
static double gauss(const struct sums *x, double m, double s)
{
	double v = s - m * m;

	if (!(v > 0))
		return HUGE_VAL;
	return 0.5 *
	       (x->c * log(v) + (x->s2 - 2 * m * x->s1 + x->c * m * m) / v);
}

static double hist_nll(const uint64_t *h, const double *rate, double scale)
{
	double ll = 0, p;

	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		if (!h[b])
			continue;
		p = occ__survival(rate, 2, hist__bucket_low(b) * scale) -
		    occ__survival(rate, 2, (hist__bucket_high(b) + 1) * scale);
		ll += h[b] * log(p > 1e-300 ? p : 1e-300);
	}
	return -ll;
}

struct ctx {
	const struct window *w;
	int way;
};

/* Minus the log-likelihood at log-rates x: for EXACT the rates of the
 * two phases of the response time (mu_i - lambda), for the given-n ways
 * the service rates mu_i. */
static double cost(const struct ctx *c, const double *x)
{
	const struct window *w = c->w;
	double a = exp(x[0]), b = exp(x[1]), lam = w->lambda, r1, r2, f = 0;

	if (fabs(x[0]) > 50 || fabs(x[1]) > 50)
		return HUGE_VAL;
	if (c->way == EXACT) {
		for (int i = 0; i < w->nt; i++) {
			double t = w->t[i], d = b - a;
			double p =
				fabs(d) < 1e-9 * a ?
					a * a * t * exp(-a * t) :
					a * b / d * (exp(-a * t) - exp(-b * t));
			f -= log(p > 1e-300 ? p : 1e-300);
		}
		return f;
	}
	r1 = lam / a;
	r2 = lam / b;
	if (r1 >= 1 || r2 >= 1)
		return HUGE_VAL;
	moments(a, b);
	if (c->way == GIVEN_SPLIT) {
		for (int i = 0; i < MAXN; i++)
			for (int j = 0; i + j < MAXN; j++)
				if (w->split[i][j].c)
					f += gauss(&w->split[i][j], M[i + 1][j],
						   S[i + 1][j]);
		return f;
	}
	/* found the system empty: S1 + S2, the service rates themselves */
	double mu[2] = { a, b };

	f = hist_nll(w->empty, mu, 1e-9);
	for (int n = 1; n < MAXN; n++) {
		double lr = log(r1 / r2), top = lr > 0 ? n * lr : 0;
		double sw = 0, m = 0, s = 0, p;

		if (!w->n[n].c)
			continue;
		/* n1 of the n ahead at tier 1: weight rho1^n1 rho2^(n - n1) */
		for (int n1 = 0; n1 <= n; n1++) {
			p = exp(n1 * lr - top);
			sw += p;
			m += p * M[n1 + 1][n - n1];
			s += p * S[n1 + 1][n - n1];
		}
		f += gauss(&w->n[n], m / sw, s / sw);
	}
	return f;
}

/* The cost at x for simplex2_minimise. */
static double ctx_cost(const void *c, const double *x)
{
	return cost(c, x);
}

/* rho, highest first, by one way; from the shipped fit's rates in both
 * orders (the given-n laws are not symmetric in the tiers) and equal. */
static void estimate(const struct window *w, const struct occ_fit *f, int way,
		     double *rho)
{
	struct ctx c = { w, way };
	double lam = w->lambda, add = way == EXACT ? 0 : lam, best = HUGE_VAL;
	double x[3][2] = {
		{ log(f->rate[0] + add), log(f->rate[1] + add) },
		{ log(f->rate[1] + add), log(f->rate[0] + add) },
	}, fx;

	x[2][0] = x[2][1] = (x[0][0] + x[0][1]) / 2;
	for (int i = 0; i < 3; i++) {
		simplex2_minimise(ctx_cost, &c, x[i], 0.3);
		fx = simplex2_minimise(ctx_cost, &c, x[i], 0.05);
		if (fx < best) {
			best = fx;
			rho[0] = lam / (exp(x[i][0]) + lam - add);
			rho[1] = lam / (exp(x[i][1]) + lam - add);
		}
	}
	if (rho[1] > rho[0]) {
		fx = rho[0];
		rho[0] = rho[1];
		rho[1] = fx;
	}
}

/* The median of the marginal weights m[0..g-1] over cells of width 1 / g
 * on (0, 1), the mass spread evenly within a cell. */
static double median(const double *m, int g, double total)
{
	double acc = 0;

	for (int i = 0; i < g; i++) {
		if (acc + m[i] >= total / 2)
			return (i + (total / 2 - acc) / m[i]) / g;
		acc += m[i];
	}
	return 1;
}

/* The bayes way: the sequence's likelihood at the centres of a g x g grid
 * of (rho1, rho2), the prior uniform; the likelihood is symmetric in the
 * tiers, so the half where rho1 >= rho2 is the sorted pairs' posterior
 * (the diagonal counted half). rho gets the marginal medians, the
 * estimates with the least mean absolute error per layer. */
static void bayes(const struct window *w, int g, double *rho)
{
	double *nll = xmalloc(sizeof(double) * g * g), least = HUGE_VAL;
	double *high = xcalloc(g, sizeof(double));
	double *low = xcalloc(g, sizeof(double));
	double total = 0, p;

	for (int i = 0; i < g; i++)
		for (int j = 0; j <= i; j++) {
			nll[i * g + j] = occ__sequence_nll(
				w->steps, w->nsteps, w->lambda * g / (i + 0.5),
				w->lambda * g / (j + 0.5));
			least = fmin(least, nll[i * g + j]);
		}
	for (int i = 0; i < g; i++)
		for (int j = 0; j <= i; j++) {
			p = exp(least - nll[i * g + j]) * (i == j ? 0.5 : 1);
			high[i] += p;
			low[j] += p;
			total += p;
		}
	rho[0] = median(high, g, total);
	rho[1] = median(low, g, total);
	free(nll);
	free(high);
	free(low);
}

static void add(struct sums *s, double t)
{
	s->c++;
	s->s1 += t;
	s->s2 += t * t;
}

struct score {
	double err[2], dist;
	int n;
};

static void score(struct score *s, const double *rho, double hi, double lo)
{
	double e0 = fabs(rho[0] - hi), e1 = fabs(rho[1] - lo);

	s->err[0] += e0;
	s->err[1] += e1;
	s->dist += sqrt(e0 * e0 + e1 * e1);
	s->n++;
}

/* The steps of requests first..last: their arrivals and every departure
 * (at most 2 size + those in at the start, fewer than size)
 * up to the last arrival (those of earlier requests too: departures are
 * in order of arrival). */
static void window_steps(struct window *w, const double *arr, const double *dep,
			 int first, int last)
{
	int id = first, i = first, n;

	while (id > 0 && dep[id - 1] > arr[first])
		id--;
	n = first - id;
	w->nsteps = 0;
	while (i <= last || (id < last && dep[id] <= arr[last])) {
		if (i <= last && (id >= i || arr[i] <= dep[id]))
			w->steps[w->nsteps++] =
				(struct occ_step){ (uint64_t)(arr[i++] * 1e9),
						   (uint32_t)++n, 1 };
		else
			w->steps[w->nsteps++] =
				(struct occ_step){ (uint64_t)(dep[id++] * 1e9),
						   (uint32_t)--n, -1 };
	}
}

int main(int argc, char **argv)
{
	int samples = argc > 1 ? atoi(argv[1]) : 5;
	int size = argc > 2 ? atoi(argv[2]) : 2000;
	int grid = getenv("BAYES_GRID") ? atoi(getenv("BAYES_GRID")) : 0;
	static struct score total[NWAYS], range[NWAYS][9];
	static struct window w;
	double *dep1, *dep2, *arr;

	if (samples < 1 || size < 100 || (grid && grid < 10)) {
		fprintf(stderr,
			"usage: [BAYES_GRID=G>=10] %s "
			"[WINDOWS_PER_PAIR [WINDOW>=100 [SEED]]]\n",
			argv[0]);
		return 2;
	}
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 17;
	w.t = malloc(sizeof(double) * size);
	w.steps = malloc(sizeof(*w.steps) * 3 * size);
	arr = malloc(sizeof(double) * (WARMUP + samples * size));
	dep1 = malloc(sizeof(double) * (WARMUP + samples * size));
	dep2 = malloc(sizeof(double) * (WARMUP + samples * size));
	if (!w.t || !w.steps || !arr || !dep1 || !dep2)
		return 1;
	for (int i1 = 0; i1 < 9; i1++)
		for (int i2 = 0; i2 < 9; i2++) {
			double rho1 = (i1 + 1) / 10.0, rho2 = (i2 + 1) / 10.0;
			double mu1 = LAMBDA / rho1, mu2 = LAMBDA / rho2;
			double a = 0, d1 = 0, d2 = 0, first = 0, t;
			int gone1 = 0, gone2 = 0, n, n1, k;

			for (int i = 0; i < WARMUP + samples * size; i++) {
				a += rng_exp(LAMBDA);
				d1 = fmax(a, d1) + rng_exp(mu1);
				d2 = fmax(d1, d2) + rng_exp(mu2);
				arr[i] = a;
				dep1[i] = d1;
				dep2[i] = d2;
				/* departures are in order: the earlier requests
				 * still in are the last ones */
				while (gone2 < i && dep2[gone2] <= a)
					gone2++;
				while (gone1 < i && dep1[gone1] <= a)
					gone1++;
				n = i - gone2;
				n1 = i - gone1;
				if (i < WARMUP)
					continue;
				k = (i - WARMUP) % size;
				if (k == 0) {
					memset(w.hist, 0, sizeof(w.hist));
					memset(w.iid, 0, sizeof(w.iid));
					memset(w.empty, 0, sizeof(w.empty));
					memset(w.n, 0, sizeof(w.n));
					memset(w.split, 0, sizeof(w.split));
					w.nt = 0;
					first = a;
				}
				t = d2 - a;
				w.t[w.nt++] = t;
				w.hist[hist_bucket(
					(uint64_t)llround(t * 1e9))]++;
				w.iid[hist_bucket((uint64_t)llround(
					(rng_exp(mu1 - LAMBDA) +
					 rng_exp(mu2 - LAMBDA)) *
					1e9))]++;
				if (n == 0)
					w.empty[hist_bucket(
						(uint64_t)llround(t * 1e9))]++;
				if (n < MAXN) {
					add(&w.n[n], t);
					add(&w.split[n1][n - n1], t);
				}
				if (k != size - 1)
					continue;

				double hi = fmax(rho1, rho2),
				       lo = fmin(rho1, rho2);
				double rho[2];
				struct occ_fit f;
				int r = i1 / 3 * 3 + i2 / 3;

				w.lambda = (size - 1) / (a - first);
				window_steps(&w, arr, dep2, i - size + 1, i);
				occ__fit(w.hist, w.lambda, 2, &f);
				score(&total[SHIPPED], f.rho, hi, lo);
				score(&range[SHIPPED][r], f.rho, hi, lo);
				for (int way = TRUE_RATE; way < NWAYS; way++) {
					struct occ_fit g;

					if (way == BAYES && !grid)
						continue;
					if (way == BAYES) {
						bayes(&w, grid, rho);
					} else if (way == SEQUENCE) {
						g = f;
						occ__refine_sequence(
							w.steps, w.nsteps, &g);
						memcpy(rho, g.rho, sizeof(rho));
					} else if (way == TRUE_RATE ||
						   way == IID) {
						occ__fit(way == IID ? w.iid :
								      w.hist,
							 LAMBDA, 2, &g);
						memcpy(rho, g.rho, sizeof(rho));
					} else {
						estimate(&w, &f, way, rho);
					}
					score(&total[way], rho, hi, lo);
					score(&range[way][r], rho, hi, lo);
				}
			}
		}
	printf("simulated tandem, 81 pairs x %d windows of %d requests\n",
	       samples, size);
	printf("%-11s MAE-high MAE-low  euclid  | euclid by rho1 x rho2 range "
	       "(low-low low-mid low-high mid-low ... high-high)\n",
	       "way");
	for (int way = 0; way < NWAYS; way++) {
		struct score *s = &total[way];

		if (!s->n)
			continue;
		printf("%-11s %.4f   %.4f   %.4f  |", way_name[way],
		       s->err[0] / s->n, s->err[1] / s->n, s->dist / s->n);
		for (int r = 0; r < 9; r++)
			printf(" %.3f", range[way][r].dist / range[way][r].n);
		printf("\n");
	}
	free(w.t);
	free(w.steps);
	free(arr);
	free(dep1);
	free(dep2);
	return 0;
}
