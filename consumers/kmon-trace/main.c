// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmon-trace: request paths across nodes as OpenTelemetry traces. Reads
 * kmond's tcp records (a file, stdin, or <prefix>tcp from Kafka as one
 * member of a consumer group), joins the two ends of each exchange
 * (traces.h), and writes every trace once it has been quiet as OTLP JSON
 * (one ExportTraceServiceRequest per line) and/or OTLP/HTTP.
 *
 *   kmon-trace (-i FILE | -b BROKERS [-p PREFIX] [-g GROUP] [-X p=v]...)
 *              [-o FILE] [-u URL [-H 'Name: value']...] [--quiet DURATION]
 *              [--late DURATION] [--stats DURATION] [--max-traces N]
 *              [--max-spans N] [--duration DURATION] [--fleet]
 *
 * --fleet: one member of a group of any size, in two stages through
 * Kafka (fleet.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "otlp.h"
#include "consumers/common/cli.h"
#include "consumers/common/kafka_group.h"
#include "fleet.h"
#include "source.h"
#include "traces.h"
#include "lib/clock.h"
#include "lib/strbuf.h"

/* Bad records: the first ones are shown, then only counted. */
#define SHOW_REJECTED 10
/* An OTLP/HTTP request carries the traces written in one pass, up to
 * about this size (collectors take 4 MiB by default). */
#define POST_BYTES (1u << 20)
#define MAX_HEADERS 32
#define NS_PER_SEC 1000000000ULL

struct opts {
	struct source_opts src;
	const char *output; /* NULL: none (only -u) */
	const char *url;
	const char *headers[MAX_HEADERS];
	int nheaders;
	uint64_t quiet_ns, late_ns, duration_ns, stats_ns;
	unsigned long long max_traces, max_spans;
	bool fleet;
};

struct app {
	const struct opts *o;
	struct traces *traces;
	struct fleet *fleet; /* --fleet */
	FILE *out;
	struct otlp_http *http;
	struct strbuf line, batch;
	uint64_t batch_spans;
	/* --fleet reads records in stage 1's thread (fleet.h) */
	_Atomic uint64_t records, rejected, skipped;
	int err; /* an output failed */
	/* The clock of --quiet and --late as of the last poll: the
	 * stream's time while reading Kafka behind it (source__clock,
	 * fleet__clock) */
	uint64_t now;
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kmon-trace (-i FILE | -b BROKERS [-p PREFIX] [-g GROUP] "
		"[-X prop=value]...)\n"
		"                  [-o FILE] [-u URL [-H 'Name: value']...] "
		"[--quiet DURATION]\n"
		"                  [--late DURATION] [--max-traces N] "
		"[--max-spans N]\n"
		"                  [--duration DURATION] [--stats DURATION]\n"
		"  -i, --input FILE   kmond's JSON lines (- = stdin); other "
		"kinds are skipped\n"
		"  -b, --brokers BROKERS  Kafka bootstrap servers: reads "
		"Ptcp\n"
		"  -p, --prefix P     kmond's topic_prefix (default kmon.)\n"
		"  -g, --group G      consumer group (default kmon-trace)\n"
		"  -X prop=value      any librdkafka consumer property\n"
		"  -o, --output FILE  OTLP JSON, one ExportTraceServiceRequest "
		"per line\n"
		"                     (default - = stdout unless -u is given)\n"
		"  -u, --otlp-http URL  POST to a collector's URL/v1/traces\n"
		"  -H, --header 'Name: value'  sent with every POST (repeatable)\n"
		"  -q, --quiet DURATION  write a trace when no span came for it "
		"for DURATION\n"
		"                     (default 5s)\n"
		"      --late DURATION  a call written without its server end "
		"still takes it\n"
		"                     for DURATION (default 60s)\n"
		"      --max-traces N open traces kept (default 100000)\n"
		"      --max-spans N  open spans kept (default 1000000); past "
		"either, the\n"
		"                     least recently active trace is written "
		"early\n"
		"  -d, --duration DURATION  stop after DURATION (Kafka; files "
		"stop at their end)\n"
		"      --stats DURATION  the counts on stderr every DURATION too "
		"(default: at exit)\n"
		"      --fleet        one member of a group of any size (with "
		"-b): two stages\n"
		"                     through PG.exchange and PG.span "
		"(see the manual)\n"
		"DURATION: 250ms, 5s, 1m, 1h; a bare number is seconds (0.5)\n");
}

static int parse_count(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return errno || *end || !*out || *out > (1ULL << 32) ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum {
		OPT_MAX_TRACES = 256,
		OPT_MAX_SPANS,
		OPT_LATE,
		OPT_STATS,
		OPT_FLEET
	};
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "brokers", required_argument, NULL, 'b' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "group", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "otlp-http", required_argument, NULL, 'u' },
		{ "header", required_argument, NULL, 'H' },
		{ "quiet", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "max-traces", required_argument, NULL, OPT_MAX_TRACES },
		{ "max-spans", required_argument, NULL, OPT_MAX_SPANS },
		{ "late", required_argument, NULL, OPT_LATE },
		{ "stats", required_argument, NULL, OPT_STATS },
		{ "fleet", no_argument, NULL, OPT_FLEET },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct source_opts *s = &o->src;
	int c;

	*o = (struct opts){ .quiet_ns = 5 * NS_PER_SEC,
			    .late_ns = 60 * NS_PER_SEC,
			    .max_traces = 100000,
			    .max_spans = 1000000 };
	s->prefix = "kmon.";
	s->group = "kmon-trace";
	while ((c = getopt_long(argc, argv, "i:b:p:g:o:u:H:q:d:X:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'i':
			s->input = optarg;
			break;
		case 'b':
			s->brokers = optarg;
			break;
		case 'p':
			s->prefix = optarg;
			break;
		case 'g':
			s->group = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'u':
			o->url = optarg;
			break;
		case 'H':
			if (o->nheaders == MAX_HEADERS)
				goto bad;
			o->headers[o->nheaders++] = optarg;
			break;
		case 'q':
			if (cli__duration(optarg, &o->quiet_ns))
				goto bad;
			break;
		case 'd':
			if (cli__duration(optarg, &o->duration_ns))
				goto bad;
			break;
		case OPT_STATS:
			if (cli__duration(optarg, &o->stats_ns))
				goto bad;
			break;
		case OPT_LATE:
			if (cli__duration(optarg, &o->late_ns))
				goto bad;
			break;
		case OPT_MAX_TRACES:
			if (parse_count(optarg, &o->max_traces))
				goto bad;
			break;
		case OPT_MAX_SPANS:
			if (parse_count(optarg, &o->max_spans))
				goto bad;
			break;
		case OPT_FLEET:
			o->fleet = true;
			break;
		case 'X':
			if (kafka_group__parse_prop(optarg, s->props,
						    &s->nprops,
						    SOURCE_MAX_PROPS))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind != argc || !s->input == !s->brokers ||
	    (o->fleet && !s->brokers))
		goto bad;
	if (o->nheaders && !o->url)
		goto bad;
	if (!o->output && !o->url)
		o->output = "-";
	return 0;
bad:
	usage(stderr);
	return -1;
}

static void reject(struct app *a, const char *where, const char *why)
{
	uint64_t n = ++a->rejected;

	if (n <= SHOW_REJECTED)
		fprintf(stderr, "kmon-trace: %s: rejected: %s%s\n", where, why,
			n == SHOW_REJECTED ? " (further rejects only counted)" :
					     "");
}

static bool is_blank(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (text[i] != ' ' && text[i] != '\t')
			return false;
	return true;
}

enum read_result { READ_SPAN, READ_SKIPPED, READ_REJECTED };

/* One record read (counted): a tcp record's fields checked into *s, its
 * members in *r; or a record skipped, or rejected with the reason in
 * err. */
static enum read_result read_record(struct app *a, const char *text, size_t len,
				    struct span_record *r, struct span *s,
				    char *err, size_t errlen)
{
	struct json_error jerr;

	if (text && is_blank(text, len))
		return READ_SKIPPED; /* not a record: not counted */
	a->records++;
	if (!text) {
		snprintf(err, errlen, "line longer than 4 MiB");
		return READ_REJECTED;
	}
	switch (span__scan(text, len, r, &jerr)) {
	case SPAN_RECORD_NOT_JSON:
		snprintf(err, errlen, "not JSON (column %zu): %s", jerr.col,
			 jerr.msg);
		return READ_REJECTED;
	case SPAN_RECORD_NO_KIND:
		snprintf(err, errlen, "kind: missing (not a kmond record)");
		return READ_REJECTED;
	case SPAN_RECORD_OTHER:
		a->skipped++; /* a file of every kind kmond writes */
		return READ_SKIPPED;
	case SPAN_RECORD_TCP:
		break;
	}
	return span__check(r, s, err, errlen) ? READ_SPAN : READ_REJECTED;
}

/* --fleet's reading of a record of <prefix>tcp (fleet.h). */
static bool read_fleet_record(const char *text, size_t len,
			      struct span_record *r, struct span *s,
			      const struct fleet_where *w, void *ctx)
{
	char err[256], where[600];

	switch (read_record(ctx, text, len, r, s, err, sizeof(err))) {
	case READ_SPAN:
		return true;
	case READ_REJECTED:
		fleet_where__format(w, where, sizeof(where));
		reject(ctx, where, err);
		break;
	case READ_SKIPPED:
		break;
	}
	return false;
}

static uint64_t on_record(const char *text, size_t len, const char *where,
			  void *ctx)
{
	struct app *a = ctx;
	struct span_record r;
	struct span s;
	char err[256];

	switch (read_record(a, text, len, &r, &s, err, sizeof(err))) {
	case READ_SPAN:
		traces__add(a->traces, span__new(&s, &r, NULL, 0), a->now);
		return s.end_ns;
	case READ_REJECTED:
		reject(a, where, err);
		break;
	case READ_SKIPPED:
		break;
	}
	return 0;
}

static void post_batch(struct app *a)
{
	if (!a->batch.len)
		return;
	strbuf__adds(&a->batch, "]}");
	otlp_http__post(a->http, a->batch.buf, a->batch.len, a->batch_spans);
	strbuf__reset(&a->batch);
	a->batch_spans = 0;
}

static void on_trace(const struct trace_view *t, void *ctx)
{
	struct app *a = ctx;

	if (a->out) {
		strbuf__reset(&a->line);
		otlp__request(t, &a->line);
		strbuf__addc(&a->line, '\n');
		if (fwrite(a->line.buf, 1, a->line.len, a->out) != a->line.len)
			a->err = 1;
	}
	if (a->http) {
		strbuf__adds(&a->batch,
			     a->batch.len ? "," : "{\"resourceSpans\":[");
		otlp__resource_spans(t, &a->batch);
		a->batch_spans += t->n;
		if (a->batch.len >= POST_BYTES)
			post_batch(a);
	}
}

/* After each pass that may have written traces. */
static int ship(struct app *a)
{
	if (a->http)
		post_batch(a);
	if (a->out && fflush(a->out))
		a->err = 1;
	if (a->err)
		fprintf(stderr, "kmon-trace: %s: %s\n", a->o->output,
			strerror(errno));
	return a->err ? -1 : 0;
}

static void print_counts(const struct app *a)
{
	const struct trace_counts *c = traces__counts(a->traces);
	struct strbuf sb = { 0 };

	strbuf__addf(
		&sb,
		"{\"kind\":\"trace_stats\",\"records\":%llu,"
		"\"rejected\":%llu,\"skipped\":%llu,\"spans\":%llu,"
		"\"joined\":%llu,\"late_joined\":%llu,\"ambiguous\":%llu,"
		"\"conflicts\":%llu,"
		"\"mismatched\":%llu,\"unmatched_client\":%llu,"
		"\"unmatched_server\":%llu,\"traces\":%llu,"
		"\"spans_written\":%llu,\"evicted\":%llu,\"held\":%llu,"
		"\"open_traces\":%llu,\"open_spans\":%llu",
		(unsigned long long)a->records, (unsigned long long)a->rejected,
		(unsigned long long)a->skipped, (unsigned long long)c->spans,
		(unsigned long long)c->joined,
		(unsigned long long)c->late_joined,
		(unsigned long long)c->ambiguous,
		(unsigned long long)c->conflicts,
		(unsigned long long)c->mismatched,
		(unsigned long long)c->unmatched_client,
		(unsigned long long)c->unmatched_server,
		(unsigned long long)c->traces_written,
		(unsigned long long)c->spans_written,
		(unsigned long long)c->evicted, (unsigned long long)c->held,
		(unsigned long long)c->open_traces,
		(unsigned long long)c->open_spans);
	if (a->http) {
		const struct otlp_http_counts *h = otlp_http__counts(a->http);

		strbuf__addf(&sb,
			     ",\"posts\":%llu,\"posts_failed\":%llu,"
			     "\"spans_failed\":%llu,\"spans_rejected\":%llu",
			     (unsigned long long)h->posts,
			     (unsigned long long)h->failed,
			     (unsigned long long)h->spans_failed,
			     (unsigned long long)h->spans_rejected);
	}
	if (a->fleet)
		fleet__counts(a->fleet, &sb);
	strbuf__adds(&sb, "}\n");
	fputs(sb.buf, stderr);
	strbuf__free(&sb);
}

/* The windows' clock now (struct app's now). */
static uint64_t windows_clock(struct app *a, struct source *src)
{
	return a->fleet ? fleet__clock(a->fleet) : source__clock(src);
}

static int run(struct app *a, struct source *src)
{
	uint64_t start = mono_ns(), now;
	uint64_t quiet = a->o->quiet_ns, duration = a->o->duration_ns;
	uint64_t stats = a->o->stats_ns;
	uint64_t next_stats = start + stats;
	bool regular = src && source__regular_file(src);
	int r = 0;

	a->now = windows_clock(a, src);
	while (!exiting) {
		r = a->fleet ? fleet__poll(a->fleet, 100) :
			       source__poll(src, 100, on_record, a);
		if (r)
			break;
		a->now = windows_clock(a, src);
		/* a file's traces are written at its end */
		if (!regular && (!a->fleet || fleet__may_write(a->fleet)))
			traces__expire(a->traces, a->now, quiet);
		if (a->fleet)
			fleet__expire(a->fleet, a->now);
		now = mono_ns();
		if (ship(a))
			return -1;
		if (duration && now - start >= duration)
			break;
		if (stats && now >= next_stats) {
			print_counts(a);
			next_stats = now + stats;
		}
	}
	/* The end: what is still open is as complete as it will get. A
	 * member of a fleet hands it over instead, as it leaves. */
	if (a->fleet)
		fleet__leave(a->fleet);
	traces__flush(a->traces);
	if (ship(a))
		return -1;
	return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct app a = { 0 };
	struct source *src = NULL;
	struct opts o;
	char err[512];
	int ret = 1;

	if (parse_opts(argc, argv, &o))
		return 2;
	a.o = &o;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.url && !(a.http = otlp_http__new(o.url, o.headers, o.nheaders,
					       err, sizeof(err)))) {
		fprintf(stderr, "kmon-trace: %s\n", err);
		return 2;
	}
	if (o.output) {
		a.out = strcmp(o.output, "-") == 0 ? stdout :
						     fopen(o.output, "a");
		if (!a.out) {
			fprintf(stderr, "kmon-trace: %s: %s\n", o.output,
				strerror(errno));
			goto cleanup;
		}
	}
	a.traces =
		traces__new(o.max_traces, o.max_spans, o.late_ns, on_trace, &a);
	if (o.fleet)
		a.fleet = fleet__open(
			&(struct fleet_opts){ .src = &o.src,
					      .late_ns = o.late_ns,
					      .max_pending = o.max_spans },
			a.traces, read_fleet_record, &a);
	else
		src = source__open(&o.src);
	if (!src && !a.fleet) {
		ret = 2;
		goto cleanup;
	}
	fprintf(stderr, "kmon-trace: reading %s%s%s\n",
		a.fleet ? fleet__name(a.fleet) : source__name(src),
		a.http ? ", posting to " : "",
		a.http ? otlp_http__endpoint(a.http) : "");
	ret = run(&a, src) ? 1 : 0;
	print_counts(&a);
cleanup:
	fleet__close(a.fleet);
	source__close(src);
	traces__free(a.traces);
	otlp_http__free(a.http);
	strbuf__free(&a.line);
	strbuf__free(&a.batch);
	if (a.out && a.out != stdout)
		fclose(a.out);
	return ret;
}
