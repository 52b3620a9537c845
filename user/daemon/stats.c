// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "exporters/exporter.h"
#include "provider/provider.h"
#include "lib/record.h"
#include "daemon/stats.h"

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

void stats__record(struct record *r, struct kmond *k,
		   const struct reload_counts *reloads, uint64_t ts,
		   double cpu, const struct self_usage *u,
		   const struct collector_report *reports, int nreports)
{
	struct provider_stats ps = { 0 };
	struct exporter_stats es;
	uint64_t events = 0, kernel_lost = 0;

	provider__stats(k->provider, &ps);
	exporter__stats(k->exporter, &es);
	for (int i = 0; i < nreports; i++) {
		events += reports[i].st.events;
		kernel_lost += reports[i].st.lost;
	}
	kernel_lost += ps.lost + ps.pids_full;

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
	record__object_begin(r, "provider");
	record__u64(r, "processes", ps.processes);
	record__u64(r, "selected", ps.selected);
	record__u64(r, "pid_changes", ps.pid_changes);
	record__u64(r, "lost", ps.lost);
	record__u64(r, "pids_full", ps.pids_full);
	record__u64(r, "listen_reads", ps.listen_reads);
	record__u64(r, "listen_changes", ps.listen_changes);
	record__object_end(r);
	record__object_begin(r, "collectors");
	for (int i = 0; i < nreports; i++) {
		record__object_begin(r, reports[i].name);
		record__bool(r, "running", reports[i].running);
		record__str(r, "attach", reports[i].attach);
		record__u64(r, "events", reports[i].st.events);
		record__u64(r, "lost", reports[i].st.lost);
		record__u64(r, "missed", reports[i].st.missed);
		if (reports[i].state && reports[i].ops->stats_record)
			reports[i].ops->stats_record(reports[i].state, r);
		record__object_end(r);
	}
	record__object_end(r);
	record__end(r);
}
