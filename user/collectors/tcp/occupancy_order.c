// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Departures paired with arrivals in order (see occupancy_order.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/tcp/occupancy_order.h"
#include "lib/xalloc.h"

void occ_order__free(struct occ_order *o)
{
	if (!o)
		return;
	free(o->inside);
	memset(o, 0, sizeof(*o));
}

static void push(struct occ_order *o, uint64_t t)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 256;
		o->inside = xrealloc(o->inside, o->cap * sizeof(*o->inside));
	}
	o->inside[o->n++] = t;
}

long occ_order__pair(struct occ_order *o, const struct occ_step *s,
		     size_t count, bool whole, int shift, double *sq)
{
	const double unit = ldexp(1e-9, shift);
	/* known from the steps before, or from an empty start: with none in
	 * progress before the first step, nothing before it matters */
	bool paired = whole && count &&
		      (long)s[0].n - s[0].delta == (long)o->n &&
		      (o->known || o->n == 0);
	size_t head = 0, end_n;
	long departures = 0;
	double t;

	*sq = 0;
	if (!whole || !count) {
		o->n = 0;
		o->known = whole;
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		if (s[i].delta == 1) {
			push(o, s[i].t_ns);
			continue;
		}
		if (head == o->n) { /* one that came before what is known */
			paired = false;
			continue;
		}
		t = (double)((s[i].t_ns - o->inside[head++]) >> shift) * unit;
		*sq += t * t;
		departures++;
	}
	/* those in progress at the end: the last to come */
	end_n = s[count - 1].n;
	o->known = end_n <= o->n - head;
	if (o->known) {
		memmove(o->inside, o->inside + o->n - end_n,
			end_n * sizeof(*o->inside));
		o->n = end_n;
	} else {
		o->n = 0;
	}
	return paired ? departures : -1;
}
