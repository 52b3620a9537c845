// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Departures paired with arrivals in order (see occupancy_order.h). */
#include <stdint.h>
#include <stdlib.h>

#include "collectors/tcp/occupancy_order.h"
#include "lib/xalloc.h"

static int by_time(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double seconds_sq(uint64_t ns)
{
	double s = (double)ns * 1e-9;

	return s * s;
}

size_t occ__order_sums(const struct occ_step *s, size_t count, int shift,
		       double *own_sq, double *paired_sq)
{
	uint64_t *arrival = xmalloc((count ? count : 1) * sizeof(*arrival));
	uint64_t *departure = xmalloc((count ? count : 1) * sizeof(*departure));
	size_t n = 0;

	*own_sq = 0;
	*paired_sq = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t own = (uint64_t)s[i].own << shift;

		if (s[i].delta >= 0 || s[i].own == UINT32_MAX ||
		    own > s[i].t_ns)
			continue;
		/* its start rounded up by less than 1 << shift ns: the
		 * same rounding the own time had, so that in order the
		 * two sums are equal to the last bit */
		departure[n] = s[i].t_ns;
		arrival[n] = s[i].t_ns - own;
		*own_sq += seconds_sq(own);
		n++;
	}
	qsort(departure, n, sizeof(*departure), by_time);
	qsort(arrival, n, sizeof(*arrival), by_time);
	/* the k-th arrival is at most the k-th departure: each of the k
	 * first to leave came before it left */
	for (size_t k = 0; k < n; k++)
		*paired_sq += seconds_sq(departure[k] - arrival[k]);
	free(arrival);
	free(departure);
	return n;
}
