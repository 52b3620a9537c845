// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-interval records are increments (a syscall record's count is the
 * calls of its interval), so counters add them up and only ever grow.
 * The stats record's figures are cumulative instead, and a collector
 * started again counts from zero: those go through add_cumulative. */
#include <stdio.h>
#include <string.h>

#include "lib/array.h"
#include "lib/json_parse.h"
#include "exporters/prom_metrics.h"

#define C PROM_COUNTER
#define G PROM_GAUGE
#define H PROM_HISTOGRAM

/* { name, help, type, ns, own } */
static const struct prom_family
	f_requests = { "kmon_requests_total",
		       "Requests seen, every one whatever the tcp requests policy (server side: by the serving service).",
		       C },
	f_duration = { "kmon_request_duration_seconds",
		       "Request latency, first byte of the request received to last byte of the response sent (in-kernel histograms; _sum from bucket midpoints).",
		       H, true },
	f_edge_requests = { "kmon_edge_requests_total",
			    "Requests on the topology edge src -> dst.", C },
	f_edge_bytes = { "kmon_edge_bytes_total",
			 "Bytes on the topology edge src -> dst: direction request (to the server) or response (back).",
			 C },
	f_outcomes = { "kmon_request_outcomes_total",
		       "Requests on the edge src -> dst whose outcome kmond knows (the error rate's denominator).",
		       C },
	f_errors = { "kmon_request_errors_total",
		     "Requests on the edge src -> dst that failed by their protocol's meaning (OpenTelemetry semantic conventions).",
		     C },
	f_http = { "kmon_http_requests_total",
		   "HTTP and HTTP/2 requests on the edge src -> dst by status_class (1xx to 5xx).",
		   C },
	f_load_arrivals = { "kmon_load_arrivals_total",
			    "Requests that arrived at the service (load records).",
			    C },
	f_load_completions = { "kmon_load_completions_total",
			       "Requests the service completed (load records).",
			       C },
	f_load_outcomes = { "kmon_load_outcomes_total",
			    "Requests of the service whose outcome kmond knows (load records).",
			    C },
	f_load_errors = { "kmon_load_errors_total",
			  "Requests of the service that failed by their protocol's meaning (load records).",
			  C },
	/* The fractional gauges below are held in billionths and shown as
	 * exact decimals, as nanoseconds are shown as seconds. */
	f_load_occupancy = { "kmon_load_occupancy",
			     "Requests in progress, time-averaged over the last interval.",
			     G, true },
	f_load_busy = { "kmon_load_busy_ratio",
			"Fraction of the last interval with at least one request in progress.",
			G, true },
	f_load_concurrency = { "kmon_load_concurrency_max",
			       "Most requests in progress at once in the last interval.",
			       G },
	f_load_latency = { "kmon_load_latency_mean_seconds",
			   "Mean latency of the requests completed in the last interval.",
			   G, true },
	f_occ_rho = { "kmon_occupancy_rho",
		      "Estimated utilisation of each hidden tier of the service (tier 1: the highest), from its latency histogram; while the fit does not hold the last estimate stays.",
		      G, true },
	f_occ_throughput = { "kmon_occupancy_throughput",
			     "Requests per second the occupancy estimate saw (scope: interval or window).",
			     G, true },
	f_syscalls = { "kmon_syscalls_total", "System calls made.", C },
	f_drops = { "kmon_tcp_drops_total",
		    "TCP segments the kernel dropped, by drop reason.", C },
	f_bio = { "kmon_block_io_total", "Block I/O requests completed.", C },
	f_bio_bytes = { "kmon_block_io_bytes_total",
			"Bytes of block I/O requests completed.", C },
	f_bio_duration = { "kmon_block_io_duration_seconds",
			   "Block I/O latency, issue to the driver to completion (_sum from bucket midpoints).",
			   H, true },
	f_offcpu = { "kmon_offcpu_seconds_total",
		     "Time threads spent blocked off-CPU (blocks of at least min_block).",
		     C, true },
	f_counter = { "kmon_counter_events_total",
		      "Configured kernel events counted in a process's context.",
		      C },
	f_events = { "kmon_events_total", "Events kmond's collectors saw.", C,
		     false, true },
	f_lost = { "kmon_lost_events_total",
		   "Events or records lost: stage kernel (in BPF, by collector), queue (a sink's outage queue was full), sink (never delivered by a sink).",
		   C, false, true },
	f_records = { "kmon_records_total", "Records kmond produced.", C, false,
		      true },
	f_delivered = { "kmon_records_delivered_total",
			"Records sinks delivered (summed over sinks).", C,
			false, true },
	f_queued = { "kmon_records_queued",
		     "Records waiting in sinks for delivery.", G, false, true },
	f_reloads = { "kmon_reloads_total", "Configuration reloads applied.", C,
		      false, true },
	f_reload_failures = { "kmon_reload_failures_total",
			      "Configuration reloads refused (bad file, a sink that could not open).",
			      C, false, true },
	f_up = { "kmon_collector_up", "1 when the collector is running.", G,
		 false, true },
	f_cpu = { "kmon_cpu_seconds_total",
		  "CPU time kmond used (user + system).", C, true, true },
	f_rss = { "kmon_resident_memory_bytes", "kmond's resident memory.", G,
		  false, true },
	f_series = { "kmon_series", "Series this exporter holds.", G, false,
		     true },
	f_dropped = { "kmon_series_dropped_total",
		      "Updates refused because max_series series exist already.",
		      C, false, true };

static const char *const kinds[] = {
	"syscall",  "drop",	"bio",	 "bio_hist", "offcpu",	  "counter",
	"topology", "tcp_hist", "stats", "load",     "occupancy",
};

bool prom_metrics__wants(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

/* One record being ingested: its parsed JSON and label scratch space. */
struct ingest {
	struct prom_table *t;
	const struct json_value *rec;
	uint64_t now_ns;
	struct strbuf labels;
};

static const char *str(const struct json_value *v, const char *key)
{
	return json__str(json__get(v, key));
}

static bool u64(const struct json_value *v, const char *key, uint64_t *out)
{
	return json__u64(json__get(v, key), out);
}

/* A count kmond writes only since some release: *has says whether the
 * record carries it; false when it is there but not a count. */
static bool opt_u64(const struct json_value *v, const char *key, uint64_t *out,
		    bool *has)
{
	*out = 0;
	*has = json__get(v, key) != NULL;
	return !*has || u64(v, key, out);
}

/* Request outcomes (docs/design/outcomes.md): outcomes and errors come
 * together or not at all; records of a kmond before them have neither. */
struct outcomes {
	bool has;
	uint64_t outcomes, errors;
};

static bool read_outcomes(const struct json_value *rec, struct outcomes *o)
{
	bool has_errors;

	return opt_u64(rec, "outcomes", &o->outcomes, &o->has) &&
	       opt_u64(rec, "errors", &o->errors, &has_errors) &&
	       has_errors == o->has;
}

/* Starts a label set with node. */
static void labels(struct ingest *in)
{
	const char *node = str(in->rec, "node");

	strbuf__reset(&in->labels);
	prom_label(&in->labels, "node", node ? node : "",
		   node ? strlen(node) : 0);
}

static void label(struct ingest *in, const char *name, const char *value)
{
	prom_label(&in->labels, name, value, strlen(value));
}

/* Records about a process: its service, else its process name (every
 * process is monitored when no service is configured). */
static const char *service(const struct json_value *rec)
{
	const char *s = str(rec, "service");

	if (!s)
		s = str(rec, "comm");
	return s ? s : "";
}

static struct prom_series *series(struct ingest *in,
				  const struct prom_family *fam)
{
	return prom_table__get(in->t, fam, in->labels.buf ? in->labels.buf : "",
			       in->now_ns);
}

static void add(struct ingest *in, const struct prom_family *fam, uint64_t v)
{
	struct prom_series *s = series(in, fam);

	if (s)
		prom_series__add(s, v);
}

static void add_cumulative(struct ingest *in, const struct prom_family *fam,
			   uint64_t v)
{
	struct prom_series *s = series(in, fam);

	if (s)
		prom_series__add_cumulative(s, v);
}

static void set(struct ingest *in, const struct prom_family *fam, uint64_t v)
{
	struct prom_series *s = series(in, fam);

	if (s)
		prom_series__set(s, v);
}

/* A fraction or rate (>= 0) for a family shown in billionths. */
static void set_fraction(struct ingest *in, const struct prom_family *fam,
			 double v)
{
	set(in, fam, v > 0 ? (uint64_t)(v * 1e9 + 0.5) : 0);
}

/* buckets: [[low_ns, count], ...] as histogram.h's buckets. */
static int observe(struct ingest *in, const struct prom_family *fam)
{
	const struct json_value *b = json__get(in->rec, "buckets");
	struct prom_series *s;

	if (!b || b->type != JSON_ARRAY)
		return -1;
	for (size_t i = 0; i < b->arr.n; i++) {
		const struct json_value *pair = &b->arr.items[i];
		uint64_t low, count;

		if (pair->type != JSON_ARRAY || pair->arr.n != 2 ||
		    !json__u64(&pair->arr.items[0], &low) ||
		    !json__u64(&pair->arr.items[1], &count))
			return -1;
	}
	s = series(in, fam);
	for (size_t i = 0; s && i < b->arr.n; i++) {
		uint64_t low, count;

		json__u64(&b->arr.items[i].arr.items[0], &low);
		json__u64(&b->arr.items[i].arr.items[1], &count);
		prom_series__observe_bucket(s, low, count);
	}
	return 0;
}

/* A record of a process with one count: name it by service and key. */
static int process_count(struct ingest *in, const struct prom_family *fam,
			 const char *key_label, const char *key_field,
			 const char *count_field)
{
	const char *key = str(in->rec, key_field);
	uint64_t n;

	if (!key || !u64(in->rec, count_field, &n))
		return -1;
	labels(in);
	label(in, "service", service(in->rec));
	label(in, key_label, key);
	add(in, fam, n);
	return 0;
}

static int disk_op(struct ingest *in)
{
	const char *disk = str(in->rec, "disk"), *op = str(in->rec, "op");

	if (!disk || !op)
		return -1;
	labels(in);
	label(in, "disk", disk);
	label(in, "op", op);
	return 0;
}

static int bio(struct ingest *in)
{
	uint64_t count, bytes;

	if (disk_op(in) || !u64(in->rec, "count", &count) ||
	    !u64(in->rec, "bytes", &bytes))
		return -1;
	add(in, &f_bio, count);
	add(in, &f_bio_bytes, bytes);
	return 0;
}

/* An edge's labels. side keeps the two ends' views of one edge apart:
 * both nodes may report it, and summing them would count it twice. */
static void edge(struct ingest *in, const char *src, const char *dst,
		 const char *side, const char *protocol)
{
	labels(in);
	label(in, "src", src);
	label(in, "dst", dst);
	label(in, "side", side ? side : "server");
	label(in, "protocol", protocol ? protocol : "unknown");
}

/* HTTP status classes: status_1xx .. status_5xx, written when not 0. */
#define STATUS_CLASSES 5

static bool read_status_classes(const struct json_value *rec,
				uint64_t counts[STATUS_CLASSES])
{
	for (int c = 0; c < STATUS_CLASSES; c++) {
		char field[16];
		bool has;

		snprintf(field, sizeof(field), "status_%dxx", c + 1);
		if (!opt_u64(rec, field, &counts[c], &has))
			return false;
	}
	return true;
}

/* Five classes at most per edge: never a series per status code or
 * per route. */
static void edge_status_classes(struct ingest *in, const char *src,
				const char *dst, const char *side,
				const char *protocol,
				const uint64_t counts[STATUS_CLASSES])
{
	for (int c = 0; c < STATUS_CLASSES; c++) {
		char class[8];

		if (!counts[c])
			continue;
		snprintf(class, sizeof(class), "%dxx", c + 1);
		edge(in, src, dst, side, protocol);
		label(in, "status_class", class);
		add(in, &f_http, counts[c]);
	}
}

static int topology(struct ingest *in)
{
	const char *src = str(in->rec, "src"), *dst = str(in->rec, "dst");
	const char *side = str(in->rec, "side");
	const char *protocol = str(in->rec, "protocol");
	uint64_t requests, req_bytes, resp_bytes, classes[STATUS_CLASSES];
	struct outcomes o;

	if (!src || !dst || !u64(in->rec, "requests", &requests) ||
	    !u64(in->rec, "req_bytes", &req_bytes) ||
	    !u64(in->rec, "resp_bytes", &resp_bytes) ||
	    !read_outcomes(in->rec, &o) ||
	    !read_status_classes(in->rec, classes))
		return -1;
	labels(in);
	label(in, "service", dst);
	label(in, "side", side ? side : "server");
	label(in, "protocol", protocol ? protocol : "unknown");
	add(in, &f_requests, requests);
	edge(in, src, dst, side, protocol);
	add(in, &f_edge_requests, requests);
	label(in, "direction", "request");
	add(in, &f_edge_bytes, req_bytes);
	edge(in, src, dst, side, protocol);
	label(in, "direction", "response");
	add(in, &f_edge_bytes, resp_bytes);
	if (o.has) {
		edge(in, src, dst, side, protocol);
		add(in, &f_outcomes, o.outcomes);
		add(in, &f_errors, o.errors);
	}
	edge_status_classes(in, src, dst, side, protocol, classes);
	return 0;
}

/* Starts a label set with node, service and side: on the client side,
 * the endpoint called stands for the service (as with tcp_hist's dst). */
static void service_side(struct ingest *in)
{
	const char *side = str(in->rec, "side");
	const char *endpoint = str(in->rec, "endpoint");

	labels(in);
	label(in, "service", endpoint ? endpoint : service(in->rec));
	label(in, "side", side ? side : "server");
}

static int load(struct ingest *in)
{
	uint64_t arrivals, completions, max, latency;
	double occupancy, busy;
	struct outcomes o;

	if (!u64(in->rec, "arrivals", &arrivals) ||
	    !u64(in->rec, "completions", &completions) ||
	    !u64(in->rec, "concurrency_max", &max) ||
	    !json__double(json__get(in->rec, "occupancy"), &occupancy) ||
	    !json__double(json__get(in->rec, "busy"), &busy) ||
	    !read_outcomes(in->rec, &o))
		return -1;
	service_side(in);
	add(in, &f_load_arrivals, arrivals);
	add(in, &f_load_completions, completions);
	if (o.has) {
		add(in, &f_load_outcomes, o.outcomes);
		add(in, &f_load_errors, o.errors);
	}
	set_fraction(in, &f_load_occupancy, occupancy);
	set_fraction(in, &f_load_busy, busy);
	set(in, &f_load_concurrency, max);
	/* null when nothing completed: the last mean stays */
	if (u64(in->rec, "latency_mean_ns", &latency))
		set(in, &f_load_latency, latency);
	return 0;
}

static int occupancy(struct ingest *in)
{
	const struct json_value *rho = json__get(in->rec, "rho");
	const char *scope = str(in->rec, "scope");
	double throughput, r;

	if (!json__double(json__get(in->rec, "throughput"), &throughput))
		return -1;
	if (rho && rho->type != JSON_NULL && rho->type != JSON_ARRAY)
		return -1;
	for (size_t i = 0; rho && rho->type == JSON_ARRAY && i < rho->arr.n;
	     i++)
		if (!json__double(&rho->arr.items[i], &r))
			return -1;
	service_side(in);
	label(in, "scope", scope ? scope : "interval");
	set_fraction(in, &f_occ_throughput, throughput);
	/* null rho (the fit does not hold): no tier series this time */
	for (size_t i = 0; rho && rho->type == JSON_ARRAY && i < rho->arr.n;
	     i++) {
		char tier[24];

		snprintf(tier, sizeof(tier), "%zu", i + 1);
		service_side(in);
		label(in, "scope", scope ? scope : "interval");
		label(in, "tier", tier);
		json__double(&rho->arr.items[i], &r);
		set_fraction(in, &f_occ_rho, r);
	}
	return 0;
}

static int tcp_hist(struct ingest *in)
{
	const char *dst = str(in->rec, "dst"), *side = str(in->rec, "side");

	if (!dst)
		return -1;
	labels(in);
	label(in, "service", dst);
	label(in, "side", side ? side : "server");
	return observe(in, &f_duration);
}

static void stats_collectors(struct ingest *in)
{
	const struct json_value *cs = json__get(in->rec, "collectors");
	const struct json_value *prov = json__get(in->rec, "provider");
	uint64_t lost = 0, full = 0;
	bool have;

	for (size_t i = 0; cs && cs->type == JSON_OBJECT && i < cs->obj.n;
	     i++) {
		const struct json_member *m = &cs->obj.members[i];
		uint64_t v;
		bool running = false;

		labels(in);
		label(in, "collector", m->key);
		if (u64(&m->value, "events", &v))
			add_cumulative(in, &f_events, v);
		json__bool(json__get(&m->value, "running"), &running);
		set(in, &f_up, running);
		label(in, "stage", "kernel");
		if (u64(&m->value, "lost", &v))
			add_cumulative(in, &f_lost, v);
	}
	/* The provider's own kernel losses (pid table full, its ringbuf). */
	have = u64(prov, "lost", &lost);
	have |= u64(prov, "pids_full", &full);
	if (have) {
		labels(in);
		label(in, "collector", "provider");
		label(in, "stage", "kernel");
		add_cumulative(in, &f_lost, lost + full);
	}
}

static int stats(struct ingest *in)
{
	static const struct {
		const struct prom_family *fam;
		const char *field;
		bool gauge;
	} plain[] = {
		{ &f_records, "records" },
		{ &f_delivered, "delivered" },
		{ &f_queued, "queued", true },
		{ &f_reloads, "reloads" },
		{ &f_reload_failures, "reload_failures" },
		{ &f_rss, "rss", true },
	};
	const struct json_value *lost = json__get(in->rec, "lost");
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		if (!u64(in->rec, plain[i].field, &v))
			continue;
		labels(in);
		if (plain[i].gauge)
			set(in, plain[i].fam, v);
		else
			add_cumulative(in, plain[i].fam, v);
	}
	for (int i = 0; i < 2; i++) {
		const char *stage = i ? "sink" : "queue";

		if (!u64(lost, stage, &v))
			continue;
		labels(in);
		label(in, "stage", stage);
		add_cumulative(in, &f_lost, v);
	}
	stats_collectors(in);
	return 0;
}

static int dispatch(struct ingest *in, const char *kind)
{
	uint64_t v;

	if (strcmp(kind, "syscall") == 0)
		return process_count(in, &f_syscalls, "syscall", "syscall",
				     "count");
	if (strcmp(kind, "counter") == 0)
		return process_count(in, &f_counter, "event", "event", "count");
	if (strcmp(kind, "bio") == 0)
		return bio(in);
	if (strcmp(kind, "bio_hist") == 0)
		return disk_op(in) ?: observe(in, &f_bio_duration);
	if (strcmp(kind, "topology") == 0)
		return topology(in);
	if (strcmp(kind, "tcp_hist") == 0)
		return tcp_hist(in);
	if (strcmp(kind, "load") == 0)
		return load(in);
	if (strcmp(kind, "occupancy") == 0)
		return occupancy(in);
	if (strcmp(kind, "stats") == 0)
		return stats(in);
	if (strcmp(kind, "drop") == 0) {
		const char *reason = str(in->rec, "reason");

		if (!reason || !u64(in->rec, "count", &v))
			return -1;
		labels(in);
		label(in, "reason", reason);
		add(in, &f_drops, v);
		return 0;
	}
	if (strcmp(kind, "offcpu") == 0) {
		if (!u64(in->rec, "total_ns", &v))
			return -1;
		labels(in);
		label(in, "service", service(in->rec));
		add(in, &f_offcpu, v);
		return 0;
	}
	return 0;
}

int prom_metrics__ingest(struct prom_table *t, const char *kind,
			 const char *json, size_t len, uint64_t now_ns)
{
	/* Label scratch space kept from record to record (the daemon
	 * thread is the only caller): no allocation per record. */
	static struct strbuf labels;
	struct json_error err;
	struct ingest in = { .t = t, .now_ns = now_ns, .labels = labels };
	int ret;

	in.rec = json__parse(json, len, &err);
	if (!in.rec)
		return -1;
	ret = dispatch(&in, kind);
	json__free((struct json_value *)in.rec);
	labels = in.labels;
	return ret;
}

void prom_metrics__self(struct prom_table *t, const char *node, uint64_t cpu_ns,
			uint64_t now_ns)
{
	struct strbuf l = { 0 };
	struct prom_series *s;

	prom_label(&l, "node", node, strlen(node));
	s = prom_table__get(t, &f_cpu, l.buf, now_ns);
	prom_series__set(s, cpu_ns);
	s = prom_table__get(t, &f_dropped, l.buf, now_ns);
	prom_series__set(s, prom_table__dropped(t));
	/* Counted after the two above exist, so it is what a scrape shows. */
	s = prom_table__get(t, &f_series, l.buf, now_ns);
	prom_series__set(s, prom_table__count(t));
	strbuf__free(&l);
}
