// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The two-tier fit refined by the likelihood of the sequence of arrivals
 * and departures (see occupancy_sequence.h).
 *
 * The chain between two events, with n inside: the hidden n2 (at tier 2)
 * rises by one at rate mu1 while n2 < n (tier 1 holds some), and the
 * path is weighted by the chance that no departure came, e^-mu2 per
 * second while n2 >= 1. From n2 = j0 >= 1 that weight is e^-mu2 tau
 * whatever the path, so the rises are Poisson: mass to j0 + d with the
 * Poisson(mu1 tau) probability of d, the rest piling at n. From n2 = 0
 * the weight runs only from the first rise on; given j rises in tau, the
 * first is the least of j uniform times, whence the factor
 * g_j = j integral_0^1 v^(j-1) e^(-mu2 tau v) dv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/occupancy_sequence.h"
#include "lib/compare.h"
#include "lib/simplex.h"
#include "lib/xalloc.h"

#define MAXN OCC_SEQ_MAX_N

/* The forward vector over n2 = 0..n, normalised, and scratch. */
struct chain {
	double a[MAXN + 2], next[MAXN + 2];
	double pois[MAXN + 2], tail[MAXN + 2]; /* P(= d), P(>= d) */
	double in[MAXN + 2];		       /* integral_0^1 v^j e^-x v dv */
	int n;
};

/* The split of n with its stationary weights rho1^(n-j) rho2^j, i.e.
 * proportional to (mu1 / mu2)^j. */
static void stationary(struct chain *c, int n, double mu1, double mu2)
{
	double r = mu1 / mu2, w = 1, s = 0;
	int j;

	c->n = n;
	/* powers of a ratio at most 1, from the heavier end */
	for (j = 0; j <= n; j++, w *= r > 1 ? 1 / r : r)
		c->a[r > 1 ? n - j : j] = w;
	for (j = 0; j <= n; j++)
		s += c->a[j];
	for (j = 0; j <= n; j++)
		c->a[j] /= s;
}

/* Poisson(x) probabilities and tails for 0..n; returns the last d whose
 * probability is not negligible (beyond it both are taken as 0). */
static int poisson(struct chain *c, double x, int n)
{
	double sum = 0;
	int d, top = n;

	c->pois[0] = x > 700 ? 0 : exp(-x);
	for (d = 1; d <= n; d++) {
		c->pois[d] = c->pois[d - 1] * x / d;
		if (d > x && c->pois[d] < 1e-17) {
			top = d;
			break;
		}
	}
	for (d = 0; d <= top; d++) {
		/* 1 - a sum: absolute errors of 1e-16 on a normalised
		 * vector, harmless where the tail is small */
		c->tail[d] = fmax(0, 1 - sum);
		sum += c->pois[d];
	}
	for (; d <= n; d++)
		c->pois[d] = c->tail[d] = 0;
	return top;
}

/* in[j] for j = 0..top: forward where j < x, backward from far above
 * where j > x, each the direction in which the recurrence
 * in[j] = (j in[j-1] - e^-x) / x damps its errors. */
static void integrals(struct chain *c, double x, int top)
{
	static double inv[MAXN + 48]; /* 1 / k */
	double ex = exp(-x), v, rx = 1 / x;
	/* from far enough above that the start's error (about
	 * x / (from - top)^2) is damped below 1e-12 on the way down */
	int j, from = top + 8 + (int)(2 * x);

	if (!inv[1])
		for (j = 1; j < MAXN + 48; j++)
			inv[j] = 1.0 / j;
	if (from > MAXN + 47)
		from = MAXN + 47;
	c->in[0] = x < 1e-9 ? 1 - x / 2 : -expm1(-x) * rx;
	for (j = 1; j <= top && j < x; j++)
		c->in[j] = (j * c->in[j - 1] - ex) * rx;
	if (j > top)
		return;
	v = ex / (from + 1 - fmin(x, from));
	for (int k = from; k > j; k--) {
		v = (x * v + ex) * inv[k];
		if (k - 1 <= top)
			c->in[k - 1] = v;
	}
}

/* The forward vector over tau seconds; returns the log of the weight
 * it lost (the chance of no departure), the vector normalised again. */
static double evolve(struct chain *c, double mu1, double mu2, double tau)
{
	int n = c->n, j, j0, d, top;
	double a1 = mu1 * tau, a2 = mu2 * tau, keep = exp(-a2), s = 0, rest;

	if (n == 0 || tau <= 0)
		return 0;
	top = poisson(c, a1, n);
	memset(c->next, 0, sizeof(double) * (n + 1));
	for (j0 = 1; j0 <= n; j0++) {
		double w = c->a[j0] * keep;

		/* a split the chain all but rules out */
		if (c->a[j0] < 1e-17)
			continue;
		for (d = 0; j0 + d < n && d <= top; d++)
			c->next[j0 + d] += w * c->pois[d];
		c->next[n] += w * c->tail[n - j0];
	}
	if (c->a[0] >= 1e-17) {
		double w = c->a[0], e1 = c->pois[0], total, dx = a1 - a2;

		/* no rise: no weight lost; the total of all paths from 0 */
		total = e1 + (fabs(dx) < 1e-9 * (1 + a1) ?
				      a1 * keep * (1 - dx / 2) :
				      a1 * (keep - e1) / dx);
		c->next[0] += w * e1;
		rest = total - e1;
		/* beyond top rises the chance is nil */
		if (n > 1)
			integrals(c, a2, (n - 2 < top ? n - 2 : top));
		for (j = 1; j < n && j <= top; j++) {
			double q = c->pois[j] * j * c->in[j - 1];

			c->next[j] += w * q;
			rest -= q;
		}
		c->next[n] += w * fmax(0, rest);
	}
	for (j = 0; j <= n; j++)
		s += c->next[j];
	if (!(s > 0))
		return -HUGE_VAL;
	for (j = 0; j <= n; j++)
		c->a[j] = c->next[j] / s;
	return log(s);
}

/* A departure: one leaves tier 2, at rate mu2 (n2 >= 1). */
static double depart(struct chain *c, double mu2)
{
	double s = 0;
	int j;

	for (j = 1; j <= c->n; j++) {
		c->a[j - 1] = c->a[j];
		s += c->a[j];
	}
	c->n--;
	if (!(s > 0))
		return -HUGE_VAL;
	for (j = 0; j <= c->n; j++)
		c->a[j] /= s;
	return log(s * mu2);
}

double occ__sequence_nll(const struct occ_step *steps, size_t count,
			 double mu1, double mu2)
{
	static struct chain c; /* 10 KiB: not on the stack */
	double ll = 0, f;
	size_t i;
	long before;
	int on = 0; /* the chain follows the steps */

	for (i = 0; i < count; i++) {
		const struct occ_step *s = &steps[i];

		before = (long)s->n - s->delta;
		if (before < 0 || before >= MAXN || s->n >= MAXN ||
		    (s->delta != 1 && s->delta != -1)) {
			on = 0;
			continue;
		}
		if (on && before == c.n && i > 0) {
			f = evolve(&c, mu1, mu2,
				   (double)(int64_t)(s->t_ns - steps[i - 1].t_ns) / 1e9);
			/* nothing of the chain is left: a request held far
			 * beyond the model (not a tier's), skipped */
			if (f == -HUGE_VAL)
				on = 0;
			else
				ll += f;
		} else {
			on = 0;
		}
		if (!on) { /* (again) from the stationary split */
			stationary(&c, (int)before, mu1, mu2);
			on = 1;
		}
		if (s->delta == 1) {
			c.a[++c.n] = 0;
			continue;
		}
		f = depart(&c, mu2);
		if (f == -HUGE_VAL) {
			on = 0;
			continue;
		}
		ll += f;
	}
	return -ll;
}

struct data {
	const struct occ_step *steps;
	size_t count;
	double lambda;
};

/* The cost at log service rates x for simplex2_minimise. */
static double data_cost(const void *p, const double *x)
{
	const struct data *d = p;
	double mu1, mu2;

	if (fabs(x[0]) > 60 || fabs(x[1]) > 60)
		return HUGE_VAL;
	mu1 = exp(x[0]);
	mu2 = exp(x[1]);
	/* an open queue at rho >= 1 has no stationary split */
	if (d->lambda >= mu1 || d->lambda >= mu2)
		return HUGE_VAL;
	return occ__sequence_nll(d->steps, d->count, mu1, mu2);
}

/* The step of Newton's method at gradient g and Hessian hs, with each
 * curvature taken by its size: where the cost curves down (as it does
 * across the fold mu1 = mu2, between the two mirror images of the best
 * point) the step goes away from the fold, not onto it. */
static void newton_step(const double *g, double hs[2][2], double *p)
{
	double tr = hs[0][0] + hs[1][1], det = hs[0][0] * hs[1][1] - hs[0][1] * hs[0][1];
	double disc = sqrt(fmax(0, tr * tr / 4 - det)), ev, v[2], gv, len;

	p[0] = p[1] = 0;
	for (int i = 0; i < 2; i++) {
		ev = tr / 2 + (i ? -disc : disc);
		/* the eigenvector of ev */
		if (fabs(hs[0][1]) > 1e-12 * (fabs(hs[0][0]) + fabs(hs[1][1]))) {
			v[0] = ev - hs[1][1];
			v[1] = hs[0][1];
		} else {
			v[0] = (hs[0][0] >= hs[1][1]) == !i;
			v[1] = !v[0];
		}
		len = hypot(v[0], v[1]);
		if (!(len > 0))
			continue;
		v[0] /= len;
		v[1] /= len;
		gv = g[0] * v[0] + g[1] * v[1];
		if (ev > 0) {
			p[0] -= gv / ev * v[0];
			p[1] -= gv / ev * v[1];
		} else { /* downhill, or off a saddle: 0.3 in log-rate */
			p[0] -= (gv > 0 ? 0.3 : -0.3) * v[0];
			p[1] -= (gv > 0 ? 0.3 : -0.3) * v[1];
		}
	}
}

/* Newton's method on the cost from x, with the gradient and the Hessian
 * from differences (6 costs a round): the cost is smooth and a start from
 * the histogram fit is near, so a few rounds do what a simplex does in a
 * hundred costs. A step that does not lower the cost is halved. Returns
 * the cost at x, x the best point. */
static double newton(const struct data *d, double *x)
{
	const double h = 0.01;
	double f0 = data_cost(d, x), g[2], hs[2][2], p[2], y[2], f = f0, len;
	int round, half;

	for (round = 0; round < 30 && f0 < HUGE_VAL; round++) {
		double fp[2], fm[2], fpp;

		for (int k = 0; k < 2; k++) {
			y[0] = x[0] + (k == 0) * h;
			y[1] = x[1] + (k == 1) * h;
			fp[k] = data_cost(d, y);
			y[0] = x[0] - (k == 0) * h;
			y[1] = x[1] - (k == 1) * h;
			fm[k] = data_cost(d, y);
			g[k] = (fp[k] - fm[k]) / (2 * h);
			hs[k][k] = (fp[k] - 2 * f0 + fm[k]) / (h * h);
		}
		y[0] = x[0] + h;
		y[1] = x[1] + h;
		fpp = data_cost(d, y);
		hs[0][1] = hs[1][0] = (fpp - fp[0] - fp[1] + f0) / (h * h);
		if (isfinite(g[0] + g[1] + hs[0][0] + hs[1][1] + hs[0][1])) {
			newton_step(g, hs, p);
		} else { /* at the edge rho < 1: inward, to faster service */
			p[0] = fm[0] < HUGE_VAL ? 0 : 0.05;
			p[1] = fm[1] < HUGE_VAL ? 0 : 0.05;
		}
		/* no step beyond a factor 2 in a rate at once */
		len = fmax(fabs(p[0]), fabs(p[1]));
		if (!(len > 0))
			break;
		if (len > 0.7) {
			p[0] *= 0.7 / len;
			p[1] *= 0.7 / len;
		}
		for (half = 0; half < 12; half++) {
			y[0] = x[0] + p[0];
			y[1] = x[1] + p[1];
			f = data_cost(d, y);
			if (f < f0)
				break;
			p[0] /= 2;
			p[1] /= 2;
		}
		if (half == 12)
			break;
		x[0] = y[0];
		x[1] = y[1];
		len = f0 - f;
		f0 = f;
		/* a relative 1e-3 on each rate: far below a window's error */
		if (fmax(fabs(p[0]), fabs(p[1])) < 1e-3 || len < 1e-6)
			break;
	}
	return f0;
}

/* The fixed delay outside the queues (the hand-offs between the tiers,
 * the network; 250 us a request between the test's real tandems, against
 * services of 1 to 9 ms): a FIFO queue shifts its output by a delay on
 * its input, so every request's delay, wherever it is spent, comes out
 * as its departure that much later. The model takes the window's
 * departures that much earlier; the delay is the one of DELAY_STEPS
 * eighths of the least response time whose fit is the likeliest.
 *
 * It is tried only where it can be told: when at least DELAY_MIN_EMPTY
 * of the arrivals found no one inside (their responses are the delay and
 * two bare services), and kept only when it raises the log-likelihood by
 * DELAY_MIN_GAIN (about a likelihood-ratio test's 5% for one parameter).
 * Busier windows hold too few of them, and a wrong delay costs more than
 * none. Simulated (the unit test, 81 pairs x 5 windows): with a delay of
 * 250 us the lower tier's error falls from 0.042 to 0.037 (0.035 to
 * 0.015 where both rho are 0.1-0.3), without one it stays 0.032. */
#define DELAY_STEPS 8
#define DELAY_MIN_EMPTY 0.2
#define DELAY_MIN_GAIN 2.0

/* A window's arrival and departure times, each in order of time (the
 * kernel's steps come in the order of its ring, a step or two of
 * another CPU's a moment off), and how many were inside before them. */
struct times {
	uint64_t *arr, *dep;
	size_t na, nd;
	uint32_t before;
};

/* Fills t from the steps (t->arr holds count times); returns the least
 * response time, or 0 when the delay cannot be told. Requests leave in
 * the order they came (FIFO tiers): the j-th departure is the request of
 * the (j - before)-th arrival. */
static uint64_t split_times(const struct occ_step *s, size_t count,
			    struct times *t)
{
	uint64_t least = UINT64_MAX;
	size_t i, empty = 0;

	t->na = t->nd = 0;
	t->before = s[0].n - s[0].delta;
	t->dep = t->arr + count;
	for (i = 0; i < count; i++) {
		if (s[i].delta == 1) {
			t->arr[t->na++] = s[i].t_ns;
			empty += s[i].n == 1;
		} else {
			*--t->dep = s[i].t_ns;
			t->nd++;
		}
	}
	if (empty < DELAY_MIN_EMPTY * t->na)
		return 0;
	qsort(t->arr, t->na, sizeof(*t->arr), u64_compare);
	qsort(t->dep, t->nd, sizeof(*t->dep), u64_compare);
	for (i = t->before; i < t->nd && i - t->before < t->na; i++)
		if (t->dep[i] > t->arr[i - t->before] &&
		    t->dep[i] - t->arr[i - t->before] < least)
			least = t->dep[i] - t->arr[i - t->before];
	return least == UINT64_MAX ? 0 : least;
}

/* Into out: the window's steps in order of time, every departure
 * delay_ns earlier, n counted again. Below the least response time,
 * every departure stays after its own arrival. */
static void without_delay(const struct times *t, uint64_t delay_ns,
			  struct occ_step *out)
{
	size_t a = 0, d = 0, k = 0;
	uint32_t n = t->before;

	while (a < t->na || d < t->nd) {
		if (d < t->nd &&
		    (a == t->na || t->dep[d] - delay_ns < t->arr[a]))
			out[k++] = (struct occ_step){ t->dep[d++] - delay_ns,
						      --n, -1 };
		else
			out[k++] = (struct occ_step){ t->arr[a++], ++n, 1 };
	}
}

struct best {
	double cost, x[2];
	int eighths;
};

/* The fit at a delay of `eighths` eighths of `least`, from the best
 * one's rates; it becomes the best when it is likelier. */
static void try_delay(const struct data *d, const struct times *t,
		      uint64_t least, int eighths, struct occ_step *buf,
		      struct best *b)
{
	struct data shifted = { buf, d->count, d->lambda };
	double x[2] = { b->x[0], b->x[1] }, cost;

	without_delay(t, least / DELAY_STEPS * eighths, buf);
	cost = newton(&shifted, x);
	if (cost < b->cost)
		*b = (struct best){ cost, { x[0], x[1] }, eighths };
}

/* The likeliest fixed delay, from the fit without one (x, its log
 * rates, replaced when a delay is kept): the steps without a delay, the
 * even eighths, then the two beside the best. Returns the delay kept. */
static uint64_t fit_delay(const struct data *d, double *x)
{
	struct times t = { xmalloc(d->count * sizeof(*t.arr)) };
	struct best b = { HUGE_VAL, { x[0], x[1] }, 0 }, none;
	uint64_t least = split_times(d->steps, d->count, &t);
	struct occ_step *buf;
	int k, first;

	if (!least) {
		free(t.arr);
		return 0;
	}
	buf = xmalloc(d->count * sizeof(*buf));
	try_delay(d, &t, least, 0, buf, &b);
	none = b;
	for (k = 2; k < DELAY_STEPS; k += 2)
		try_delay(d, &t, least, k, buf, &b);
	first = b.eighths;
	if (first > 0)
		try_delay(d, &t, least, first - 1, buf, &b);
	if (first + 1 < DELAY_STEPS)
		try_delay(d, &t, least, first + 1, buf, &b);
	free(t.arr);
	free(buf);
	if (!(b.cost < none.cost - DELAY_MIN_GAIN))
		return 0;
	x[0] = b.x[0];
	x[1] = b.x[1];
	return least / DELAY_STEPS * b.eighths;
}

int occ__refine_sequence(const struct occ_step *steps, size_t count,
			 struct occ_fit *f)
{
	struct data d = { steps, count, f->lambda };
	double lam = f->lambda, x[2], mid;
	size_t i, departures = 0;

	if (f->tiers != 2 || !f->ok)
		return -1;
	for (i = 0; i < count; i++)
		departures += steps[i].delta == -1;
	if (departures < OCC_MIN_SAMPLES)
		return -1;
	/* From the histogram fit's rates, set apart when they are close:
	 * the likelihood is the same with the tiers swapped (the departures
	 * of exponential servers in tandem do not depend on their order), so
	 * mu1 = mu2 is a fold, between two mirror images of the best point,
	 * where the gradient across it is zero. */
	x[0] = log(f->rate[0] + lam);
	x[1] = log(f->rate[1] + lam);
	if (fabs(x[0] - x[1]) < 0.2) {
		/* both above lambda, rho < 1 */
		mid = fmax((x[0] + x[1]) / 2 - 0.1, log(lam) + 0.01);
		x[0] = mid;
		x[1] = mid + 0.2;
	}
	if (!(newton(&d, x) < HUGE_VAL))
		return -1;
	f->delay_ns = fit_delay(&d, x);
	occ__set_service_rates(f, exp(x[0]), exp(x[1]));
	return 0;
}
