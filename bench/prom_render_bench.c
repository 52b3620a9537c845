// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench/prometheus-scrape.sh's second half: the prometheus sink's work on
 * kmond's main thread, alone (the daemon's figure carries every other
 * collector's work and this shared machine's noise): ingesting syscall
 * records into SERVICES x SYSCALLS series, then rendering them all, as
 * each interval does. Linked with the daemon's own objects. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exporters/prom_metrics.h"
#include "exporters/prom_series.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int services = argc > 1 ? atoi(argv[1]) : 250;
	int syscalls = argc > 2 ? atoi(argv[2]) : 40;
	int rounds = 21;
	struct prom_table *t = prom_table__new(0, 0);
	struct strbuf rec = { 0 }, out = { 0 };
	double ingest[21], render[21], t0;

	size_t *ends = calloc((size_t)services * syscalls, sizeof(*ends));
	int n = 0;

	/* The records first, as the collectors' encoding is not measured. */
	for (int s = 0; s < services; s++)
		for (int c = 0; c < syscalls; c++) {
			strbuf__addf(
				&rec,
				"{\"kind\":\"syscall\",\"ts\":1795459664641556700,"
				"\"node\":\"bench-node\",\"pid\":%d,\"comm\":\"svc%04d\","
				"\"service\":\"service-%04d\",\"syscall\":\"syscall_%d\","
				"\"nr\":%d,\"count\":%d}",
				1000 + s, s, s, 500 + c, 500 + c, 7);
			ends[n++] = rec.len;
		}
	for (int r = 0; r < rounds; r++) {
		t0 = now_ms();
		for (int i = 0; i < n; i++) {
			size_t start = i ? ends[i - 1] : 0;

			prom_metrics__ingest(t, "syscall", rec.buf + start,
					     ends[i] - start, 1);
		}
		ingest[r] = now_ms() - t0;
		t0 = now_ms();
		prom_metrics__self(t, "bench-node", 1, 1);
		strbuf__reset(&out);
		prom_table__render(t, &out);
		render[r] = now_ms() - t0;
	}
	qsort(ingest, rounds, sizeof(double), cmp);
	qsort(render, rounds, sizeof(double), cmp);
	printf("%zu series, %zu bytes of text: render %.3f ms (median of %d; "
	       "min %.3f, max %.3f), ingest %.3f us per record\n",
	       prom_table__count(t), out.len, render[rounds / 2], rounds,
	       render[0], render[rounds - 1],
	       ingest[rounds / 2] * 1e3 / (services * syscalls));
	prom_table__free(t);
	strbuf__free(&rec);
	strbuf__free(&out);
	free(ends);
	return 0;
}
