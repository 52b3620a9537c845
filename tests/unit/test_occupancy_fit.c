/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The tandem-queue fit on exact truth: closed forms of the model, rates
 * recovered from large samples, refusals of data the model cannot hold,
 * and the published protocol on a simulated two-tier tandem (81
 * utilization pairs, windows of 2000 requests), so the estimator's own
 * error is known apart from any measurement error.
 *
 * OCC_SAMPLES=N sets the windows per pair (default 30, the protocol's);
 * OCC_TABLE=1 prints the table by range of rho. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "lib/hash.h"
#include "lib/histogram.h"
#include "collectors/occupancy_fit.h"
#include "collectors/occupancy_given_n.h"

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	return splitmix64_next(&rng_state);
}

static double rng_exp(double rate)
{
	/* 53 random bits in (0, 1] */
	double u = ((rng_next() >> 11) + 1) * 0x1.0p-53;

	return -log(u) / rate;
}

static double rng_normal(void)
{
	double u = ((rng_next() >> 11) + 1) * 0x1.0p-53;
	double v = (rng_next() >> 11) * 0x1.0p-53;

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static int near(double got, double want, double tol)
{
	if (fabs(got - want) <= tol)
		return 1;
	fprintf(stderr, "  got %.9g, want %.9g +- %g\n", got, want, tol);
	return 0;
}

/* The model against the textbook formulas. */
static void test_survival(void)
{
	double r1[] = { 2 }, r2[] = { 1, 3 }, eq[] = { 2, 2 }, e3[] = { 1.5, 1.5, 1.5 };
	double close[] = { 1, 1 + 1e-9 }, fast3[] = { 1, 3, 1e7 };
	double t, at;
	int bad = 0;

	for (t = 0.01; t < 30; t *= 1.3) {
		at = 2 * t;
		bad += !near(occ__survival(r1, 1, t), exp(-at), 1e-15);
		/* (b e^-at - a e^-bt) / (b - a) */
		bad += !near(occ__survival(r2, 2, t),
			     (3 * exp(-t) - exp(-3 * t)) / 2, 1e-13);
		bad += !near(occ__survival(eq, 2, t), exp(-at) * (1 + at), 1e-13);
		bad += !near(occ__survival(close, 2, t), exp(-t) * (1 + t),
			     1e-8);
		at = 1.5 * t;
		bad += !near(occ__survival(e3, 3, t),
			     exp(-at) * (1 + at + at * at / 2), 1e-12);
		/* a phase a million times faster adds nothing visible */
		bad += !near(occ__survival(fast3, 3, t),
			     occ__survival(r2, 2, t), 1e-6);
	}
	/* the tail keeps its relative precision */
	t = 40;
	bad += !near(occ__survival(e3, 3, t) / (exp(-60) * (1 + 60 + 1800)),
		     1, 1e-9);
	CHECK(bad == 0);
	CHECK(occ__survival(r2, 2, 0) == 1);
	CHECK(occ__survival(r2, 2, -1) == 1);
}

/* The moments given the split against closed forms: nobody ahead, S1 +
 * S2; a tier a million times faster adds nothing, leaving an Erlang. */
static void test_given_split(void)
{
	double m, s;
	int bad = 0;

	occ__given_split(2, 5, 0, 0, &m, &s);
	bad += !near(m, 0.5 + 0.2, 1e-12);
	bad += !near(s - m * m, 0.25 + 0.04, 1e-12);
	occ__given_split(2, 2e6, 6, 0, &m, &s);
	bad += !near(m, 7 / 2.0, 1e-4);
	bad += !near(s - m * m, 7 / 4.0, 1e-4);
	occ__given_split(2e6, 4, 0, 9, &m, &s);
	bad += !near(m, 10 / 4.0, 1e-4);
	bad += !near(s - m * m, 10 / 16.0, 1e-4);
	/* one ahead at each tier, equal rates 1: by the first steps, the
	 * tagged request leaves after 4 services in a row whatever the
	 * order (each tier serves one at a time and it is last), less any
	 * overlap: between Erlang 2 (full overlap) and Erlang 4 */
	occ__given_split(1, 1, 1, 1, &m, &s);
	CHECK(m > 2 && m < 4);
	CHECK(bad == 0);
}

static void add_ns(uint64_t *b, double ns)
{
	b[hist_bucket((uint64_t)llround(ns))]++;
}

/* Independent hypoexponential samples: the rates come back. */
static void test_recover(void)
{
	static uint64_t b[HIST_BUCKETS];
	/* per second; lambda 100/s: rho 0.8, 0.5, 0.2 */
	double rates[][3] = { { 25, 100, 400 }, { 50, 50, 0 }, { 25, 400, 0 } };
	int tiers[] = { 3, 2, 2 }, i, j, n;
	struct occ_fit f;

	rng_state = 1;
	for (i = 0; i < 3; i++) {
		memset(b, 0, sizeof(b));
		for (n = 0; n < 200000; n++) {
			double t = 0;

			for (j = 0; j < tiers[i]; j++)
				t += rng_exp(rates[i][j] / 1e9);
			add_ns(b, t);
		}
		CHECK(occ__fit(b, 100, tiers[i], &f) == 0);
		CHECK(f.samples == 200000);
		for (j = 0; j < tiers[i]; j++)
			CHECK(near(f.rate[j], rates[i][j], rates[i][j] * 0.05));
		CHECK(f.rho[0] >= f.rho[tiers[i] - 1]);
		CHECK(f.ks < f.ks_limit);
	}
}

/* Data no tandem of exponential servers makes: refused, with a reason. */
static void test_refuse(void)
{
	static uint64_t b[HIST_BUCKETS];
	struct occ_fit f;
	int n;

	rng_state = 2;
	/* lognormal, sigma 2: heavy tail, CV about 7 (2.2 winsorized) */
	memset(b, 0, sizeof(b));
	for (n = 0; n < 2000; n++)
		add_ns(b, 1e6 * exp(2 * rng_normal()));
	CHECK(occ__fit(b, 100, 2, &f) == -1);
	CHECK(!f.ok && f.why && strcmp(f.why, "cv above 1") == 0);

	/* nearly constant (CV 0.05): two exponentials cannot be that narrow */
	memset(b, 0, sizeof(b));
	for (n = 0; n < 2000; n++)
		add_ns(b, 1e6 * (1 + 0.05 * rng_normal()));
	CHECK(occ__fit(b, 100, 2, &f) == -1);
	CHECK(f.why && strcmp(f.why, "poor fit") == 0);
	CHECK(f.ks > f.ks_limit);

	/* two far-apart modes: a CV under 1, a shape no hypoexponential has */
	memset(b, 0, sizeof(b));
	for (n = 0; n < 2000; n++)
		add_ns(b, (n % 2 ? 1e6 : 5e6) + rng_exp(1 / 1e5));
	CHECK(occ__fit(b, 100, 2, &f) == -1);
	CHECK(f.why && strcmp(f.why, "poor fit") == 0);

	memset(b, 0, sizeof(b));
	for (n = 0; n < OCC_MIN_SAMPLES - 1; n++)
		add_ns(b, 1e6 + rng_exp(1 / 1e6));
	CHECK(occ__fit(b, 100, 2, &f) == -1);
	CHECK(f.why && strcmp(f.why, "too few samples") == 0);
	add_ns(b, 1e6);
	CHECK(occ__fit(b, 0, 2, &f) == -1);
	CHECK(f.why && strcmp(f.why, "no throughput") == 0);
	CHECK(occ__fit(b, 100, 0, &f) == -1);
	CHECK(occ__fit(b, 100, OCC_MAX_TIERS + 1, &f) == -1);
	CHECK(f.why && strcmp(f.why, "tiers out of range") == 0);
}

/* --- the protocol on a simulated tandem --- */

#define WINDOW 2000
#define WARMUP 5000
#define LAMBDA 100.0 /* requests per second */

struct cell {
	double err[2], dist, dist2;
	int windows, refused;
};

struct grid {
	struct cell cells[9][9];
	double cpu_ns;
	double cv_max, ks_max;
};

/* One utilization pair: a tandem of two FIFO single servers fed by
 * Poisson arrivals, run past its warm-up, cut into windows of WINDOW
 * consecutive requests, each window fitted with the throughput it saw.
 * iid: each response time drawn on its own from the stationary law
 * instead (no window holds a busy period's run of alike requests), to
 * tell the estimator's error from the windows' correlation. */
static void run_pair(int i1, int i2, int samples, int iid, int given_n,
		     struct grid *g)
{
	static uint64_t b[HIST_BUCKETS];
	static struct occ_given_n gn;
	static double dep[WARMUP + 100 * WINDOW];
	int gone = 0, n;
	double rho1 = (i1 + 1) / 10.0, rho2 = (i2 + 1) / 10.0;
	double mu1 = LAMBDA / rho1 / 1e9, mu2 = LAMBDA / rho2 / 1e9;
	double a = 0, d1 = 0, d2 = 0, first = 0, hi, lo, e0, e1, lambda;
	struct cell *c = &g->cells[i1][i2];
	struct timespec t0, t1;
	struct occ_fit f;
	int i, w;

	for (i = 0; i < WARMUP + samples * WINDOW; i++) {
		a += rng_exp(LAMBDA / 1e9);
		d1 = fmax(a, d1) + rng_exp(mu1);
		d2 = fmax(d1, d2) + rng_exp(mu2);
		/* in progress at arrival: departures are in order, so the
		 * earlier requests still in are the last ones */
		dep[i] = d2;
		while (gone < i && dep[gone] <= a)
			gone++;
		n = i - gone;
		if (i < WARMUP)
			continue;
		w = (i - WARMUP) % WINDOW;
		if (w == 0) {
			memset(b, 0, sizeof(b));
			memset(&gn, 0, sizeof(gn));
			first = a;
		}
		if (iid)
			add_ns(b, rng_exp(mu1 - LAMBDA / 1e9) +
					  rng_exp(mu2 - LAMBDA / 1e9));
		else
			add_ns(b, d2 - a);
		if (n == 0)
			add_ns(gn.empty, d2 - a);
		if (n < OCC_GIVEN_N) {
			gn.count[n]++;
			gn.sum[n] += (d2 - a) / 1e9;
			gn.sum_sq[n] += (d2 - a) * (d2 - a) / 1e18;
		}
		if (w != WINDOW - 1)
			continue;
		lambda = iid ? LAMBDA : (WINDOW - 1) / (a - first) * 1e9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		occ__fit(b, lambda, 2, &f);
		if (given_n)
			occ__refine_given_n(&gn, &f);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		g->cpu_ns += (t1.tv_sec - t0.tv_sec) * 1e9 +
			     (t1.tv_nsec - t0.tv_nsec);
		g->cv_max = fmax(g->cv_max, f.cv);
		g->ks_max = fmax(g->ks_max, f.ks);
		c->windows++;
		if (!f.ok) {
			c->refused++;
			fprintf(stderr, "  refused (%.1f, %.1f): %s, cv %.3f ks %.4f\n",
				rho1, rho2, f.why, f.cv, f.ks);
			continue;
		}
		/* sorted pairs: the higher truth against the higher estimate */
		hi = fmax(rho1, rho2);
		lo = fmin(rho1, rho2);
		e0 = fabs(f.rho[0] - hi);
		e1 = fabs(f.rho[1] - lo);
		c->err[0] += e0;
		c->err[1] += e1;
		c->dist += sqrt(e0 * e0 + e1 * e1);
		c->dist2 += e0 * e0 + e1 * e1;
	}
}

static void cell_add(struct cell *to, const struct cell *c)
{
	to->err[0] += c->err[0];
	to->err[1] += c->err[1];
	to->dist += c->dist;
	to->dist2 += c->dist2;
	to->windows += c->windows;
	to->refused += c->refused;
}

static const char *range_name[] = { "0.1-0.3", "0.4-0.6", "0.7-0.9" };

/* The protocol's figures: MAE per sorted layer and the Euclidean distance
 * of the sorted pairs, over all 81 pairs and by range of rho1 x rho2.
 * Checks them against the bounds: MAE of the higher and the lower layer,
 * mean distance, and the worst range's mean distance. */
static void grid(const char *what, int iid, int given_n, int samples,
		 double mae_high,
		 double mae_low, double dist, double worst_dist)
{
	static struct grid g;
	struct cell sum = { { 0 } }, byrange[3][3];
	int i, j, n;
	double mae0, mae1, mean, sd, worst = 0;

	memset(&g, 0, sizeof(g));
	memset(byrange, 0, sizeof(byrange));
	rng_state = 17;
	for (i = 0; i < 9; i++)
		for (j = 0; j < 9; j++) {
			run_pair(i, j, samples, iid, given_n, &g);
			cell_add(&byrange[i / 3][j / 3], &g.cells[i][j]);
			cell_add(&sum, &g.cells[i][j]);
		}
	n = sum.windows - sum.refused;
	mae0 = sum.err[0] / n;
	mae1 = sum.err[1] / n;
	mean = sum.dist / n;
	sd = sqrt(fmax(0, sum.dist2 / n - mean * mean));
	printf("%s, 81 pairs x %d windows of %d requests:\n", what, samples,
	       WINDOW);
	printf("  MAE high %.4f, low %.4f; euclidean %.4f +- %.4f; "
	       "refused %d of %d; cv max %.3f, ks max %.3f; "
	       "fit cpu %.2f ms per window\n",
	       mae0, mae1, mean, sd, sum.refused, sum.windows, g.cv_max,
	       g.ks_max, g.cpu_ns / sum.windows / 1e6);
	printf("  rho1     rho2     MAE-high MAE-low  euclid           refused\n");
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			struct cell *r = &byrange[i][j];
			double m;

			n = r->windows - r->refused;
			m = r->dist / n;
			printf("  %-8s %-8s %.4f   %.4f   %.4f +- %.4f  %d/%d\n",
			       range_name[i], range_name[j], r->err[0] / n,
			       r->err[1] / n, m,
			       sqrt(fmax(0, r->dist2 / n - m * m)), r->refused,
			       r->windows);
			worst = fmax(worst, m);
		}
	CHECK(mae0 <= mae_high);
	CHECK(mae1 <= mae_low);
	CHECK(mean <= dist);
	CHECK(worst <= worst_dist);
	/* a true tandem is refused rarely: under 1% of its windows */
	CHECK(sum.refused * 100 <= sum.windows);
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	/* at most 100: the simulator's arrays */
	return v && atoi(v) > 0 ? (atoi(v) < 100 ? atoi(v) : 100) : def;
}

int main(void)
{
	test_survival();
	test_recover();
	test_refuse();
	test_given_split();
	/* The estimator on the model's own law: issue 17's targets (0.03
	 * per layer, 0.05 mean distance) hold. */
	grid("independent response times", 1, 0, env_int("OCC_SAMPLES", 10),
	     0.03, 0.03, 0.05, 0.05);
	/* Windows of a simulated tandem, the protocol. The published queue
	 * model had 0.05 per layer and 0.09 +- 0.10; here (seed 17) the
	 * higher layer 0.031, the lower 0.056, the distance 0.068 +- 0.073:
	 * a window of 2000 requests at rho 0.9 holds a handful of busy
	 * periods, each a run of alike response times, so its histogram's
	 * shape strays from the stationary law, and the lower layer, read
	 * from that shape, suffers most. These bounds keep what is reached. */
	grid("simulated tandem", 0, 0, env_int("OCC_SAMPLES", 30), 0.035, 0.065,
	     0.08, 0.12);
	/* The same windows with each request's number in progress at its
	 * arrival (occupancy_given_n.h): what kmond reports. 10 windows a
	 * pair by default, as the fit takes 4 ms a window (30, seed 17:
	 * higher 0.0286, lower 0.0460, distance 0.0584 +- 0.0566, worst
	 * range 0.090, against 0.0305, 0.0555, 0.0677 and 0.105 above; 10:
	 * 0.0296, 0.0491, 0.0618, 0.109). Bounds a little above what is
	 * reached, below what the histogram fit alone reaches. */
	grid("simulated tandem, given n", 0, 1, env_int("OCC_SAMPLES", 10),
	     0.033, 0.053, 0.066, 0.12);
	return unit_done("occupancy_fit");
}
