// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The load accumulators' arithmetic (bpf/tcp/tcp_load.h): a start at s adds
 * -s to area (and to busy when nothing was in progress), an end at e adds
 * e; read at t, area + in_progress * t and busy + (in_progress > 0) * t are
 * the exact integrals, modulo 2^64 on the way. */
#include <stdint.h>

#include "collectors/tcp/loads.h"
#include "unit.h"

struct acc {
	uint64_t area, busy, n;
};

static void start(struct acc *a, uint64_t s)
{
	if (a->n++ == 0)
		a->busy -= s;
	a->area -= s;
}

static void end(struct acc *a, uint64_t e)
{
	if (--a->n == 0)
		a->busy += e;
	a->area += e;
}

int main(void)
{
	/* large clock values, as after days of uptime */
	const uint64_t T = 900000000000000ULL;
	struct acc a = { 0 };

	start(&a, T + 100);
	CHECK(tcp_load__area(a.area, a.n, T + 150) == 50);
	CHECK(tcp_load__busy(a.busy, a.n, T + 150) == 50);
	start(&a, T + 200); /* two in progress from 200 */
	end(&a, T + 300); /* the first: 200 long */
	CHECK(tcp_load__area(a.area, a.n, T + 300) == 200 + 100);
	CHECK(tcp_load__busy(a.busy, a.n, T + 300) == 200);
	end(&a, T + 400); /* the second: 200 long; idle from 400 */
	CHECK(a.n == 0);
	CHECK(tcp_load__area(a.area, a.n, T + 1000) == 400);
	CHECK(tcp_load__busy(a.busy, a.n, T + 1000) == 300);
	start(&a, T + 1000);
	/* an interval [900, 1100]: the differences of two reads */
	CHECK(tcp_load__area(a.area, a.n, T + 1100) - tcp_load__area(0, 0, 0) -
		      400 ==
	      100);
	CHECK(tcp_load__busy(a.busy, a.n, T + 1100) -
		      tcp_load__busy(a.busy, a.n, T + 1050) ==
	      50);
	return unit_done("loads");
}
