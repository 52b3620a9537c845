// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "exporters/exporter.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "daemon/stats.h"

double self_age_s(void)
{
	unsigned long long start = 0;
	struct timespec now;
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after the comm: state is field 3, starttime field 22 */
	if (!p || sscanf(p + 2,
			 "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %*s %*s %*s %*s %llu",
			 &start) != 1)
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &now);
	return now.tv_sec + now.tv_nsec / 1e9 -
	       (double)start / sysconf(_SC_CLK_TCK);
}

void self_usage(struct self_usage *u)
{
	struct rusage ru;
	unsigned long pages = 0, resident = 0;
	FILE *f;

	getrusage(RUSAGE_SELF, &ru);
	u->cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	u->rss_peak = (uint64_t)ru.ru_maxrss * 1024;
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	u->rss = (uint64_t)resident * sysconf(_SC_PAGESIZE);
}

/* The names of the hooks a features_off mask holds (probe.h). */
static void features_array(struct record *r, const struct hook *hooks,
			   int nhooks, uint64_t off)
{
	record__array_begin(r, "features_off");
	for (int h = 0; h < nhooks && h < 64; h++)
		if (off & (1ULL << h))
			record__array_str(r, hooks[h].name);
	record__array_end(r);
}

void stats__record(struct record *r, struct kmond *k,
		   const struct reload_counts *reloads, uint64_t ts, double cpu,
		   const struct self_usage *u,
		   const struct collector_report *reports, int nreports)
{
	struct provider_stats ps = { 0 };
	struct exporter_stats es;
	uint64_t events = 0, kernel_lost = 0, features_off = 0;

	provider__stats(k->provider, &ps);
	exporter__stats(k->exporter, &es);
	for (int i = 0; i < nreports; i++) {
		events += reports[i].st.events;
		kernel_lost += reports[i].st.lost;
		features_off += __builtin_popcountll(reports[i].features_off);
	}
	kernel_lost += ps.lost + ps.pids_full;
	features_off += __builtin_popcountll(ps.features_off);

	record__begin(r, "stats", ts, k->cfg.node);
	record__u64(r, "events", events);
	record__object_begin(r, "lost");
	record__u64(r, "kernel", kernel_lost);
	record__u64(r, "queue", es.sinks.dropped);
	record__u64(r, "sink", es.sinks.failed);
	record__object_end(r);
	record__u64(r, "records", es.records);
	record__u64(r, "delivered", es.sinks.delivered);
	record__u64(r, "failed", es.sinks.failed);
	record__u64(r, "queued", es.sinks.queued);
	record__double(r, "cpu", cpu);
	record__u64(r, "rss", u->rss);
	record__u64(r, "rss_peak", u->rss_peak);
	record__u64(r, "reloads", reloads->reloads);
	record__u64(r, "reload_failures", reloads->failures);
	record__u64(r, "features_off", features_off);
	record__object_begin(r, "provider");
	record__u64(r, "processes", ps.processes);
	record__u64(r, "selected", ps.selected);
	record__u64(r, "pid_changes", ps.pid_changes);
	record__u64(r, "lost", ps.lost);
	record__u64(r, "pids_full", ps.pids_full);
	record__u64(r, "listen_reads", ps.listen_reads);
	record__u64(r, "listen_changes", ps.listen_changes);
	features_array(r, provider_hooks, provider_nhooks, ps.features_off);
	record__object_end(r);
	record__object_begin(r, "collectors");
	for (int i = 0; i < nreports; i++) {
		record__object_begin(r, reports[i].name);
		record__bool(r, "running", reports[i].running);
		record__str(r, "attach", reports[i].attach);
		record__u64(r, "events", reports[i].st.events);
		record__u64(r, "lost", reports[i].st.lost);
		record__u64(r, "missed", reports[i].st.missed);
		features_array(r, reports[i].ops->hooks, reports[i].ops->nhooks,
			       reports[i].features_off);
		if (reports[i].state && reports[i].ops->stats_record)
			reports[i].ops->stats_record(reports[i].state, r);
		record__object_end(r);
	}
	record__object_end(r);
	record__end(r);
}
