// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The prometheus exporter's pure parts: label escaping, seconds, the
 * series table (limits, expiry, counters that only grow), the histogram
 * bounds against histogram.h's buckets, records -> text, and the listen
 * address syntax. */
#include <sys/socket.h>

#include "lib/histogram.h"
#include "exporters/prom_metrics.h"
#include "exporters/prom_series.h"
#include "lib/hostport.h"
#include "unit.h"

#define S 1000000000ULL

static const struct prom_family fam_c = { "t_total", "A counter.",
					  PROM_COUNTER };
static const struct prom_family fam_own = { "t_own", "Own.", PROM_GAUGE, false,
					    true };
static const struct prom_family fam_h = { "t_seconds", "A histogram.",
					  PROM_HISTOGRAM, true };

static char *render(struct prom_table *t)
{
	static struct strbuf sb;

	strbuf__reset(&sb);
	prom_table__render(t, &sb);
	return sb.buf ? sb.buf : "";
}

static void test_labels_and_seconds(void)
{
	struct strbuf sb = { 0 };

	prom_label(&sb, "a", "x", 1);
	prom_label(&sb, "b", "q\"b\\n\nz\0y", 9);
	CHECK_STR(sb.buf, "a=\"x\",b=\"q\\\"b\\\\n\\nzy\"");
	strbuf__reset(&sb);
	prom_add_seconds(&sb, 1500000);
	strbuf__addc(&sb, ' ');
	prom_add_seconds(&sb, 3 * S);
	strbuf__addc(&sb, ' ');
	prom_add_seconds(&sb, 1);
	strbuf__addc(&sb, ' ');
	prom_add_seconds(&sb, 0);
	CHECK_STR(sb.buf, "0.0015 3 0.000000001 0");
	strbuf__free(&sb);
}

static void test_table(void)
{
	struct prom_table *t = prom_table__new(10 * S, 2);
	struct prom_series *a, *b;

	a = prom_table__get(t, &fam_c, "x=\"1\"", 1 * S);
	prom_series__add(a, 5);
	CHECK(prom_table__get(t, &fam_c, "x=\"1\"", 2 * S) == a);
	prom_series__add(a, 2);
	b = prom_table__get(t, &fam_c, "x=\"2\"", 2 * S);
	prom_series__add_cumulative(b, 10);
	prom_series__add_cumulative(b, 15);
	/* a restart from zero: 3 more, not 3 - 15 */
	prom_series__add_cumulative(b, 3);
	CHECK(prom_series__value(b) == 18);
	/* max_series 2: the third is refused and counted; own ones are not */
	CHECK(prom_table__get(t, &fam_c, "x=\"3\"", 2 * S) == NULL);
	CHECK(prom_table__dropped(t) == 1);
	CHECK(prom_table__get(t, &fam_own, "", 2 * S) != NULL);
	CHECK_STR(render(t),
		  "# HELP t_total A counter.\n# TYPE t_total counter\n"
		  "t_total{x=\"1\"} 7\nt_total{x=\"2\"} 18\n"
		  "# HELP t_own Own.\n# TYPE t_own gauge\nt_own 0\n");
	/* x=1 updated at 11 s lives on; x=2 (last at 2 s) expires at 12 s */
	prom_table__get(t, &fam_c, "x=\"1\"", 11 * S);
	prom_table__expire(t, 12 * S);
	CHECK(prom_table__count(t) == 2);
	CHECK_STR(render(t),
		  "# HELP t_total A counter.\n# TYPE t_total counter\n"
		  "t_total{x=\"1\"} 7\n"
		  "# HELP t_own Own.\n# TYPE t_own gauge\nt_own 0\n");
	/* room again, and a series that comes back starts from zero */
	b = prom_table__get(t, &fam_c, "x=\"2\"", 13 * S);
	CHECK(b != NULL && prom_series__value(b) == 0);
	prom_table__expire(t, 1000 * S);
	CHECK(prom_table__count(t) == 1); /* own series never expire */
	prom_table__free(t);
}

/* Each le bound is the high end of a kernel bucket, so no bucket
 * straddles one. */
static void test_bounds(void)
{
	for (int i = 0; i < PROM_NLE; i++) {
		uint32_t b = hist_bucket(prom_le_ns[i]);

		CHECK(hist__bucket_high(b) == prom_le_ns[i]);
		CHECK(hist_bucket(prom_le_ns[i] + 1) == b + 1);
		CHECK(i == 0 || prom_le_ns[i] > prom_le_ns[i - 1]);
	}
}

static void test_histogram(void)
{
	struct prom_table *t = prom_table__new(0, 0);
	struct prom_series *h = prom_table__get(t, &fam_h, "s=\"a\"", 0);
	const char *text;

	/* 1 us, the bucket just under the 1 ms bound, the one just above,
	 * and 20 s (past the last bound: +Inf only) */
	prom_series__observe_bucket(h, 1000, 2);
	prom_series__observe_bucket(h, hist__bucket_low(hist_bucket(1015807)),
				    3);
	prom_series__observe_bucket(h, 1015808, 4);
	prom_series__observe_bucket(h, 20 * S, 1);
	text = render(t);
	CHECK(strstr(text, "# TYPE t_seconds histogram\n") != NULL);
	CHECK(strstr(text, "t_seconds_bucket{s=\"a\",le=\"0.000049151\"} 2\n"));
	CHECK(strstr(text, "t_seconds_bucket{s=\"a\",le=\"0.000507903\"} 2\n"));
	CHECK(strstr(text, "t_seconds_bucket{s=\"a\",le=\"0.001015807\"} 5\n"));
	CHECK(strstr(text, "t_seconds_bucket{s=\"a\",le=\"0.002490367\"} 9\n"));
	CHECK(strstr(text,
		     "t_seconds_bucket{s=\"a\",le=\"10.200547327\"} 9\n"));
	CHECK(strstr(text, "t_seconds_bucket{s=\"a\",le=\"+Inf\"} 10\n"));
	CHECK(strstr(text, "t_seconds_count{s=\"a\"} 10\n"));
	CHECK(strstr(text, "t_seconds_sum{s=\"a\"} ") != NULL);
	prom_table__free(t);
}

static void ingest(struct prom_table *t, const char *kind, const char *json)
{
	CHECK(prom_metrics__ingest(t, kind, json, strlen(json), 1) == 0);
}

static void test_records(void)
{
	struct prom_table *t = prom_table__new(0, 0);
	const char *text, *bad;

	CHECK(!prom_metrics__wants("tcp"));
	CHECK(prom_metrics__wants("syscall") && prom_metrics__wants("stats"));
	ingest(t, "syscall",
	       "{\"kind\":\"syscall\",\"ts\":1,\"node\":\"n1\",\"pid\":7,\"comm\":\"a\","
	       "\"service\":\"web\",\"syscall\":\"read\",\"nr\":0,\"count\":120}");
	ingest(t, "syscall",
	       "{\"kind\":\"syscall\",\"ts\":2,\"node\":\"n1\",\"pid\":7,\"comm\":\"a\","
	       "\"service\":\"web\",\"syscall\":\"read\",\"nr\":0,\"count\":3}");
	/* no service: named by the process */
	ingest(t, "syscall",
	       "{\"kind\":\"syscall\",\"ts\":2,\"node\":\"n1\",\"pid\":8,\"comm\":\"b\","
	       "\"service\":null,\"syscall\":\"read\",\"nr\":0,\"count\":1}");
	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"10.0.0.7\","
	       "\"dst\":\"web\",\"side\":\"server\",\"requests\":5,\"bytes\":30,"
	       "\"req_bytes\":10,\"resp_bytes\":20,\"latency_p50_ns\":1,"
	       "\"latency_p95_ns\":1,\"latency_p99_ns\":1}");
	ingest(t, "tcp_hist",
	       "{\"kind\":\"tcp_hist\",\"ts\":1,\"node\":\"n1\",\"src\":\"10.0.0.7\","
	       "\"dst\":\"web\",\"side\":\"server\",\"buckets\":[[98304,4],[5,1]]}");
	ingest(t, "offcpu",
	       "{\"kind\":\"offcpu\",\"ts\":1,\"node\":\"n1\",\"pid\":7,\"comm\":\"a\","
	       "\"service\":\"web\",\"stack\":[],\"total_ns\":1500000000,\"count\":2}");
	ingest(t, "stats",
	       "{\"kind\":\"stats\",\"ts\":1,\"node\":\"n1\",\"events\":9,"
	       "\"lost\":{\"kernel\":0,\"queue\":1,\"sink\":2},\"records\":40,"
	       "\"delivered\":38,\"failed\":2,\"queued\":0,\"cpu\":1.5,\"rss\":4096,"
	       "\"reloads\":1,\"reload_failures\":0,\"collectors\":{\"tcp\":"
	       "{\"running\":true,\"attach\":\"tp_btf\",\"events\":9,\"lost\":0}}}");
	ingest(t, "bio",
	       "{\"kind\":\"bio\",\"ts\":1,\"node\":\"n1\",\"pid\":9,\"comm\":\"dd\","
	       "\"service\":null,\"disk\":\"vda\",\"op\":\"write\",\"count\":128,"
	       "\"bytes\":67108864,\"latency_p50_ns\":104447,\"latency_p99_ns\":737279,"
	       "\"queued\":0,\"queue_p50_ns\":null,\"queue_p99_ns\":null}");
	ingest(t, "bio_hist",
	       "{\"kind\":\"bio_hist\",\"ts\":1,\"node\":\"n1\",\"pid\":9,\"comm\":\"dd\","
	       "\"service\":null,\"disk\":\"vda\",\"op\":\"write\","
	       "\"buckets\":[[98304,100],[737280,28]]}");
	ingest(t, "drop",
	       "{\"kind\":\"drop\",\"ts\":1,\"node\":\"n1\",\"pid\":null,\"comm\":null,"
	       "\"service\":null,\"reason\":\"NO_SOCKET\",\"count\":4,\"stack\":[]}");
	ingest(t, "counter",
	       "{\"kind\":\"counter\",\"ts\":1,\"node\":\"n1\",\"pid\":7,\"comm\":\"a\","
	       "\"service\":\"web\",\"event\":\"sched:sched_process_fork\","
	       "\"type\":\"tracepoint\",\"count\":3}");
	/* a record missing its count adds nothing */
	bad = "{\"node\":\"n1\",\"syscall\":\"x\"}";
	CHECK(prom_metrics__ingest(t, "syscall", bad, strlen(bad), 1) == -1);
	CHECK(prom_metrics__ingest(t, "syscall", "{nope", 5, 1) == -1);
	text = render(t);
	CHECK(strstr(
		text,
		"kmon_syscalls_total{node=\"n1\",service=\"web\",syscall=\"read\"} 123\n"));
	CHECK(strstr(
		text,
		"kmon_syscalls_total{node=\"n1\",service=\"b\",syscall=\"read\"} 1\n"));
	CHECK(strstr(
		text,
		"kmon_requests_total{node=\"n1\",service=\"web\",side=\"server\",protocol=\"unknown\"} 5\n"));
	CHECK(strstr(
		text,
		"kmon_edge_requests_total{node=\"n1\",src=\"10.0.0.7\",dst=\"web\",side=\"server\",protocol=\"unknown\"} 5\n"));
	CHECK(strstr(
		text,
		"kmon_edge_bytes_total{node=\"n1\",src=\"10.0.0.7\",dst=\"web\",side=\"server\",protocol=\"unknown\",direction=\"request\"} 10\n"));
	CHECK(strstr(
		text,
		"kmon_edge_bytes_total{node=\"n1\",src=\"10.0.0.7\",dst=\"web\",side=\"server\",protocol=\"unknown\",direction=\"response\"} 20\n"));
	CHECK(strstr(
		text,
		"kmon_request_duration_seconds_bucket{node=\"n1\",service=\"web\",side=\"server\",le=\"0.000049151\"} 1\n"));
	CHECK(strstr(
		text,
		"kmon_request_duration_seconds_bucket{node=\"n1\",service=\"web\",side=\"server\",le=\"0.000098303\"} 1\n"));
	CHECK(strstr(
		text,
		"kmon_request_duration_seconds_bucket{node=\"n1\",service=\"web\",side=\"server\",le=\"0.000253951\"} 5\n"));
	CHECK(strstr(
		text,
		"kmon_request_duration_seconds_count{node=\"n1\",service=\"web\",side=\"server\"} 5\n"));
	CHECK(strstr(
		text,
		"kmon_offcpu_seconds_total{node=\"n1\",service=\"web\"} 1.5\n"));
	CHECK(strstr(text, "kmon_records_total{node=\"n1\"} 40\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_total{node=\"n1\",disk=\"vda\",op=\"write\"} 128\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_bytes_total{node=\"n1\",disk=\"vda\",op=\"write\"} 67108864\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_duration_seconds_bucket{node=\"n1\",disk=\"vda\",op=\"write\",le=\"0.000098303\"} 0\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_duration_seconds_bucket{node=\"n1\",disk=\"vda\",op=\"write\",le=\"0.000253951\"} 100\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_duration_seconds_bucket{node=\"n1\",disk=\"vda\",op=\"write\",le=\"0.001015807\"} 128\n"));
	CHECK(strstr(
		text,
		"kmon_block_io_duration_seconds_count{node=\"n1\",disk=\"vda\",op=\"write\"} 128\n"));
	CHECK(strstr(
		text,
		"kmon_tcp_drops_total{node=\"n1\",reason=\"NO_SOCKET\"} 4\n"));
	CHECK(strstr(
		text,
		"kmon_counter_events_total{node=\"n1\",service=\"web\",event=\"sched:sched_process_fork\"} 3\n"));
	CHECK(strstr(text,
		     "kmon_lost_events_total{node=\"n1\",stage=\"sink\"} 2\n"));
	CHECK(strstr(text,
		     "kmon_events_total{node=\"n1\",collector=\"tcp\"} 9\n"));
	CHECK(strstr(text,
		     "kmon_collector_up{node=\"n1\",collector=\"tcp\"} 1\n"));
	CHECK(strstr(text, "kmon_resident_memory_bytes{node=\"n1\"} 4096\n"));
	prom_table__free(t);
}

/* The tcp collector's side and protocol, load and occupancy records (as
 * docs/records.md shows them). */
static void test_load_records(void)
{
	struct prom_table *t = prom_table__new(0, 0);
	const char *text, *bad;

	CHECK(prom_metrics__wants("load") && prom_metrics__wants("occupancy"));
	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"web\","
	       "\"dst\":\"10.0.0.9:6379\",\"side\":\"client\",\"src_addr\":\"10.0.0.7\","
	       "\"requests\":4,\"bytes\":50,\"req_bytes\":20,\"resp_bytes\":30,"
	       "\"latency_p50_ns\":1,\"latency_p95_ns\":1,\"latency_p99_ns\":1,"
	       "\"protocol\":\"redis\"}");
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":1,\"node\":\"n1\",\"service\":\"api\","
	       "\"side\":\"server\",\"interval_ns\":1000212311,\"arrivals\":981,"
	       "\"completions\":980,\"occupancy\":3.93,\"busy\":0.998,"
	       "\"concurrency_max\":4,\"in_progress\":4,\"latency_mean_ns\":4012337}");
	/* nothing completed: counters grow by 0, the last mean stays */
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":2,\"node\":\"n1\",\"service\":\"api\","
	       "\"side\":\"server\",\"interval_ns\":1000000000,\"arrivals\":2,"
	       "\"completions\":0,\"occupancy\":0.5,\"busy\":0.25,"
	       "\"concurrency_max\":2,\"in_progress\":2,\"latency_mean_ns\":null}");
	/* no service: named by the process */
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":2,\"node\":\"n1\",\"pid\":8,\"comm\":\"nginx\","
	       "\"service\":null,\"side\":\"server\",\"interval_ns\":1000000000,"
	       "\"arrivals\":0,\"completions\":0,\"occupancy\":0,\"busy\":0,"
	       "\"concurrency_max\":0,\"in_progress\":0,\"latency_mean_ns\":null}");
	ingest(t, "occupancy",
	       "{\"kind\":\"occupancy\",\"ts\":1,\"node\":\"n1\",\"service\":\"api\","
	       "\"side\":\"server\",\"scope\":\"interval\",\"span_ns\":10000433012,"
	       "\"tiers\":2,\"samples\":1012,\"throughput\":101.2,\"rho\":[0.81,0.34],"
	       "\"fit\":{\"holds\":true,\"why\":null,\"ks\":0.031,\"ks_limit\":0.27,"
	       "\"cv\":0.84,\"cpu_ns\":1402311}}");
	/* the fit does not hold: throughput, but no tier */
	ingest(t, "occupancy",
	       "{\"kind\":\"occupancy\",\"ts\":1,\"node\":\"n1\",\"service\":\"db\","
	       "\"side\":\"server\",\"scope\":\"window\",\"span_ns\":60000000000,"
	       "\"tiers\":2,\"samples\":12,\"throughput\":0.2,\"rho\":null,"
	       "\"fit\":{\"holds\":false,\"why\":\"too few samples\",\"ks\":0,"
	       "\"ks_limit\":0,\"cv\":0,\"cpu_ns\":1}}");
	/* the client side: an endpoint its callers call */
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":2,\"node\":\"n1\","
	       "\"endpoint\":\"10.0.0.9:5432\",\"side\":\"client\","
	       "\"interval_ns\":1000000000,\"arrivals\":7,\"completions\":7,"
	       "\"occupancy\":0.1,\"busy\":0.1,\"concurrency_max\":1,"
	       "\"in_progress\":0,\"latency_mean_ns\":14285714}");
	ingest(t, "occupancy",
	       "{\"kind\":\"occupancy\",\"ts\":2,\"node\":\"n1\","
	       "\"endpoint\":\"10.0.0.9:5432\",\"side\":\"client\","
	       "\"scope\":\"interval\",\"span_ns\":1000000000,\"tiers\":2,"
	       "\"samples\":700,\"throughput\":7,\"rho\":[0.07,0.03],"
	       "\"fit\":{\"holds\":true,\"why\":null,\"ks\":0.03,"
	       "\"ks_limit\":0.27,\"cv\":0.8,\"sequence\":true,"
	       "\"given_n\":false,\"cpu_ns\":1}}");
	/* bad records add nothing */
	bad = "{\"node\":\"n1\",\"service\":\"x\",\"arrivals\":1,\"completions\":1,"
	      "\"concurrency_max\":1,\"occupancy\":\"high\",\"busy\":0.1}";
	CHECK(prom_metrics__ingest(t, "load", bad, strlen(bad), 1) == -1);
	bad = "{\"node\":\"n1\",\"service\":\"x\",\"throughput\":1,\"rho\":[0.5,\"x\"]}";
	CHECK(prom_metrics__ingest(t, "occupancy", bad, strlen(bad), 1) == -1);
	text = render(t);
	CHECK(strstr(
		text,
		"kmon_requests_total{node=\"n1\",service=\"10.0.0.9:6379\",side=\"client\",protocol=\"redis\"} 4\n"));
	CHECK(strstr(
		text,
		"kmon_edge_requests_total{node=\"n1\",src=\"web\",dst=\"10.0.0.9:6379\",side=\"client\",protocol=\"redis\"} 4\n"));
	CHECK(strstr(
		text,
		"kmon_edge_bytes_total{node=\"n1\",src=\"web\",dst=\"10.0.0.9:6379\",side=\"client\",protocol=\"redis\",direction=\"response\"} 30\n"));
	CHECK(strstr(text, "# TYPE kmon_load_arrivals_total counter\n"));
	CHECK(strstr(
		text,
		"kmon_load_arrivals_total{node=\"n1\",service=\"api\",side=\"server\"} 983\n"));
	CHECK(strstr(
		text,
		"kmon_load_completions_total{node=\"n1\",service=\"api\",side=\"server\"} 980\n"));
	CHECK(strstr(text, "# TYPE kmon_load_occupancy gauge\n"));
	CHECK(strstr(
		text,
		"kmon_load_occupancy{node=\"n1\",service=\"api\",side=\"server\"} 0.5\n"));
	CHECK(strstr(
		text,
		"kmon_load_busy_ratio{node=\"n1\",service=\"api\",side=\"server\"} 0.25\n"));
	CHECK(strstr(
		text,
		"kmon_load_concurrency_max{node=\"n1\",service=\"api\",side=\"server\"} 2\n"));
	CHECK(strstr(
		text,
		"kmon_load_latency_mean_seconds{node=\"n1\",service=\"api\",side=\"server\"} 0.004012337\n"));
	CHECK(strstr(
		text,
		"kmon_load_arrivals_total{node=\"n1\",service=\"nginx\",side=\"server\"} 0\n"));
	CHECK(!strstr(
		text,
		"kmon_load_latency_mean_seconds{node=\"n1\",service=\"nginx\""));
	CHECK(strstr(text, "# TYPE kmon_occupancy_rho gauge\n"));
	CHECK(strstr(
		text,
		"kmon_occupancy_rho{node=\"n1\",service=\"api\",side=\"server\",scope=\"interval\",tier=\"1\"} 0.81\n"));
	CHECK(strstr(
		text,
		"kmon_occupancy_rho{node=\"n1\",service=\"api\",side=\"server\",scope=\"interval\",tier=\"2\"} 0.34\n"));
	CHECK(strstr(
		text,
		"kmon_occupancy_throughput{node=\"n1\",service=\"api\",side=\"server\",scope=\"interval\"} 101.2\n"));
	CHECK(strstr(
		text,
		"kmon_occupancy_throughput{node=\"n1\",service=\"db\",side=\"server\",scope=\"window\"} 0.2\n"));
	CHECK(!strstr(text, "kmon_occupancy_rho{node=\"n1\",service=\"db\""));
	CHECK(!strstr(text, "service=\"x\""));
	CHECK(strstr(
		text,
		"kmon_load_arrivals_total{node=\"n1\",service=\"10.0.0.9:5432\",side=\"client\"} 7\n"));
	CHECK(strstr(
		text,
		"kmon_occupancy_rho{node=\"n1\",service=\"10.0.0.9:5432\",side=\"client\",scope=\"interval\",tier=\"1\"} 0.07\n"));
	prom_table__free(t);
}

/* Request outcomes (docs/design/outcomes.md) on topology and load
 * records: errors and outcomes per edge and per service, HTTP status
 * classes as a label of five values; an older kmond's records (without
 * them) make no such series. */
static void test_outcome_records(void)
{
	struct prom_table *t = prom_table__new(0, 0);
	const char *text, *bad;
	static const char edge[] =
		"node=\"n1\",src=\"web\",dst=\"api\",side=\"server\",protocol=\"http\"";
	char want[512];

	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"web\","
	       "\"dst\":\"api\",\"side\":\"server\",\"requests\":10,\"bytes\":30,"
	       "\"req_bytes\":10,\"resp_bytes\":20,\"latency_p50_ns\":1,"
	       "\"latency_p95_ns\":1,\"latency_p99_ns\":1,\"protocol\":\"http\","
	       "\"outcomes\":9,\"errors\":2,\"status_2xx\":5,\"status_4xx\":2,"
	       "\"status_5xx\":2}");
	/* the next interval adds up; a class written as 0 makes no series */
	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":2,\"node\":\"n1\",\"src\":\"web\","
	       "\"dst\":\"api\",\"side\":\"server\",\"requests\":4,\"bytes\":3,"
	       "\"req_bytes\":1,\"resp_bytes\":2,\"latency_p50_ns\":1,"
	       "\"latency_p95_ns\":1,\"latency_p99_ns\":1,\"protocol\":\"http\","
	       "\"outcomes\":4,\"errors\":1,\"status_2xx\":3,\"status_3xx\":0,"
	       "\"status_5xx\":1}");
	/* redis: outcomes, no status classes */
	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n1\",\"src\":\"api\","
	       "\"dst\":\"10.0.0.9:6379\",\"side\":\"client\",\"requests\":7,"
	       "\"bytes\":7,\"req_bytes\":3,\"resp_bytes\":4,\"latency_p50_ns\":1,"
	       "\"latency_p95_ns\":1,\"latency_p99_ns\":1,\"protocol\":\"redis\","
	       "\"outcomes\":7,\"errors\":0}");
	/* an older kmond: no outcomes at all */
	ingest(t, "topology",
	       "{\"kind\":\"topology\",\"ts\":1,\"node\":\"n2\",\"src\":\"web\","
	       "\"dst\":\"api\",\"side\":\"server\",\"requests\":6,\"bytes\":3,"
	       "\"req_bytes\":1,\"resp_bytes\":2,\"latency_p50_ns\":1,"
	       "\"latency_p95_ns\":1,\"latency_p99_ns\":1,\"protocol\":\"http\"}");
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":1,\"node\":\"n1\",\"service\":\"api\","
	       "\"side\":\"server\",\"interval_ns\":1000000000,\"arrivals\":10,"
	       "\"completions\":10,\"occupancy\":0.5,\"busy\":0.5,"
	       "\"concurrency_max\":2,\"in_progress\":0,\"latency_mean_ns\":5,"
	       "\"outcomes\":10,\"errors\":3}");
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":2,\"node\":\"n1\",\"service\":\"api\","
	       "\"side\":\"server\",\"interval_ns\":1000000000,\"arrivals\":1,"
	       "\"completions\":1,\"occupancy\":0.5,\"busy\":0.5,"
	       "\"concurrency_max\":2,\"in_progress\":0,\"latency_mean_ns\":5,"
	       "\"outcomes\":1,\"errors\":1}");
	ingest(t, "load",
	       "{\"kind\":\"load\",\"ts\":1,\"node\":\"n2\",\"service\":\"api\","
	       "\"side\":\"server\",\"interval_ns\":1000000000,\"arrivals\":1,"
	       "\"completions\":1,\"occupancy\":0.5,\"busy\":0.5,"
	       "\"concurrency_max\":2,\"in_progress\":0,\"latency_mean_ns\":5}");
	/* outcomes without errors, or not a count: refused, nothing added */
	bad = "{\"node\":\"n1\",\"src\":\"x\",\"dst\":\"y\",\"requests\":1,"
	      "\"req_bytes\":1,\"resp_bytes\":1,\"outcomes\":1}";
	CHECK(prom_metrics__ingest(t, "topology", bad, strlen(bad), 1) == -1);
	bad = "{\"node\":\"n1\",\"src\":\"x\",\"dst\":\"y\",\"requests\":1,"
	      "\"req_bytes\":1,\"resp_bytes\":1,\"outcomes\":1,\"errors\":\"1\"}";
	CHECK(prom_metrics__ingest(t, "topology", bad, strlen(bad), 1) == -1);
	bad = "{\"node\":\"n1\",\"src\":\"x\",\"dst\":\"y\",\"requests\":1,"
	      "\"req_bytes\":1,\"resp_bytes\":1,\"status_5xx\":-1}";
	CHECK(prom_metrics__ingest(t, "topology", bad, strlen(bad), 1) == -1);
	bad = "{\"node\":\"n1\",\"service\":\"x\",\"arrivals\":1,"
	      "\"completions\":1,\"concurrency_max\":1,\"occupancy\":1,"
	      "\"busy\":0.1,\"errors\":1}";
	CHECK(prom_metrics__ingest(t, "load", bad, strlen(bad), 1) == -1);
	text = render(t);
	CHECK(strstr(text, "# TYPE kmon_request_errors_total counter\n"));
	snprintf(want, sizeof(want), "kmon_request_outcomes_total{%s} 13\n",
		 edge);
	CHECK(strstr(text, want));
	snprintf(want, sizeof(want), "kmon_request_errors_total{%s} 3\n", edge);
	CHECK(strstr(text, want));
	snprintf(want, sizeof(want),
		 "kmon_http_requests_total{%s,status_class=\"2xx\"} 8\n", edge);
	CHECK(strstr(text, want));
	snprintf(want, sizeof(want),
		 "kmon_http_requests_total{%s,status_class=\"4xx\"} 2\n", edge);
	CHECK(strstr(text, want));
	snprintf(want, sizeof(want),
		 "kmon_http_requests_total{%s,status_class=\"5xx\"} 3\n", edge);
	CHECK(strstr(text, want));
	CHECK(!strstr(text, "status_class=\"3xx\""));
	CHECK(!strstr(text, "status_class=\"1xx\""));
	CHECK(strstr(
		text,
		"kmon_request_errors_total{node=\"n1\",src=\"api\",dst=\"10.0.0.9:6379\",side=\"client\",protocol=\"redis\"} 0\n"));
	CHECK(!strstr(
		text,
		"kmon_http_requests_total{node=\"n1\",src=\"api\",dst=\"10.0.0.9:6379\""));
	/* the older node's edge: counted as before, no outcome series */
	CHECK(strstr(
		text,
		"kmon_edge_requests_total{node=\"n2\",src=\"web\",dst=\"api\",side=\"server\",protocol=\"http\"} 6\n"));
	CHECK(!strstr(text, "kmon_request_outcomes_total{node=\"n2\""));
	CHECK(!strstr(text, "kmon_request_errors_total{node=\"n2\""));
	CHECK(!strstr(text, "kmon_http_requests_total{node=\"n2\""));
	CHECK(strstr(
		text,
		"kmon_load_outcomes_total{node=\"n1\",service=\"api\",side=\"server\"} 11\n"));
	CHECK(strstr(
		text,
		"kmon_load_errors_total{node=\"n1\",service=\"api\",side=\"server\"} 4\n"));
	CHECK(strstr(
		text,
		"kmon_load_arrivals_total{node=\"n2\",service=\"api\",side=\"server\"} 1\n"));
	CHECK(!strstr(text, "kmon_load_errors_total{node=\"n2\""));
	CHECK(!strstr(text, "kmon_load_outcomes_total{node=\"n2\""));
	/* the refused records added nothing */
	CHECK(!strstr(text, "src=\"x\"") && !strstr(text, "service=\"x\""));
	prom_table__free(t);
}

static void test_listen(void)
{
	static const uint8_t v4[16] = { 10, 0, 0, 9 }, v6[16] = { [15] = 1 };
	char host[HOSTPORT_HOST_MAX], port[8], why[128], ep[64];

	hostport__format(AF_INET, v4, 5432, ep, sizeof(ep));
	CHECK_STR(ep, "10.0.0.9:5432");
	hostport__format(AF_INET6, v6, 80, ep, sizeof(ep));
	CHECK_STR(ep, "[::1]:80");

	CHECK(hostport__parse("127.0.0.1:9464", host, sizeof(host), port,
			      sizeof(port), why, sizeof(why)) == 0);
	CHECK_STR(host, "127.0.0.1");
	CHECK_STR(port, "9464");
	CHECK(hostport__parse("[::1]:80", host, sizeof(host), port,
			      sizeof(port), why, sizeof(why)) == 0);
	CHECK_STR(host, "::1");
	CHECK(hostport__parse("localhost:1", host, sizeof(host), port,
			      sizeof(port), why, sizeof(why)) == 0);
	CHECK(hostport__parse("::1:80", host, sizeof(host), port, sizeof(port),
			      why, sizeof(why)) == -1);
	CHECK(hostport__parse("[nope]:80", host, sizeof(host), port,
			      sizeof(port), why, sizeof(why)) == -1);
	CHECK(hostport__parse("h:0", host, sizeof(host), port, sizeof(port),
			      why, sizeof(why)) == -1);
	CHECK(hostport__parse("h:65536", host, sizeof(host), port, sizeof(port),
			      why, sizeof(why)) == -1);
	CHECK(hostport__parse(":80", host, sizeof(host), port, sizeof(port),
			      why, sizeof(why)) == -1);
	CHECK(hostport__parse("h:8x", host, sizeof(host), port, sizeof(port),
			      why, sizeof(why)) == -1);
}

int main(void)
{
	test_labels_and_seconds();
	test_table();
	test_bounds();
	test_histogram();
	test_records();
	test_load_records();
	test_outcome_records();
	test_listen();
	return unit_done("prom");
}
