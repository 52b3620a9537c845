// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmon-view: flame graphs, heatmaps and the topology graph from kmond's
 * records (a JSON-lines file, stdin or Kafka). */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumers/common/cli.h"
#include "view.h"
#include "lib/array.h"

static const char usage_text[] =
	"usage: kmon-view flame|heatmap|topology|load (-i FILE | -b BROKERS) "
	"[options]\n"
	"input and output:\n"
	"  -i, --input FILE    kmond's JSON lines (\"-\" = stdin)\n"
	"  -b, --brokers BROKERS  read the <prefix><kind> topics from their "
	"first message\n"
	"                      to their end at start-up\n"
	"  -p, --prefix P      Kafka topic prefix (default kmon.)\n"
	"  -o, --output FILE   output file (default stdout)\n"
	"  --title TEXT        picture title\n"
	"  --kafka BROKERS     old spelling of -b/--brokers (deprecated)\n"
	"filters:\n"
	"  --from T, --to T    records with T_from <= ts < T_to; epoch seconds "
	"(1700000000,\n"
	"                      1700000000.5) or nanoseconds\n"
	"  --service NAME      one service (topology: edges from or to it)\n"
	"  --pid PID           one process (flame, heatmap)\n"
	"flame (offcpu records):\n"
	"  --folded            folded stacks \"root;...;leaf NS\" instead of SVG\n"
	"  --root comm|pid|service|none   bottom frame per process (default "
	"comm)\n"
	"  --offsets           keep +0x offsets in frame names (one frame per "
	"call site)\n"
	"  --without FUNC      leave out the blocks whose stack holds the "
	"function FUNC\n"
	"                      (repeatable): a server's waits for work\n"
	"  --width PX          SVG width (default 1200)\n"
	"heatmap (offcpu/offcpu_hist, or bio/bio_hist records with --bio):\n"
	"  --bio               block I/O latency instead of off-CPU time\n"
	"  --step DURATION     time per column (default: at most 60 columns)\n"
	"  --width PX          SVG width (default 1200)\n"
	"topology (topology records):\n"
	"  --interval DURATION kmond's interval, for requests/s (default: "
	"estimated)\n"
	"  -o FILE.svg         SVG through Graphviz's dot; any other name: "
	"DOT\n"
	"load (load and occupancy records):\n"
	"  --width PX          SVG width (default 1200); a panel per service: "
	"measured\n"
	"                      busy and occupancy, estimated rho per tier, "
	"the share\n"
	"                      of requests that failed, over time\n"
	"DURATION: 250ms, 5s, 1m, 1h; a bare number is seconds (0.5)\n"
	"exit codes: 0 ok, 1 runtime failure (Kafka, dot, output), 2 bad "
	"usage or input\n";

enum {
	OPT_KAFKA = 256,
	OPT_TITLE,
	OPT_FROM,
	OPT_TO,
	OPT_SERVICE,
	OPT_PID,
	OPT_FOLDED,
	OPT_ROOT,
	OPT_OFFSETS,
	OPT_WITHOUT,
	OPT_WIDTH,
	OPT_BIO,
	OPT_STEP,
	OPT_INTERVAL,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "brokers", required_argument, NULL, 'b' },
	{ "kafka", required_argument, NULL, OPT_KAFKA },
	{ "prefix", required_argument, NULL, 'p' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "service", required_argument, NULL, OPT_SERVICE },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "offsets", no_argument, NULL, OPT_OFFSETS },
	{ "without", required_argument, NULL, OPT_WITHOUT },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "bio", no_argument, NULL, OPT_BIO },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kmon-view: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage_text);
	return VIEW_BAD_INPUT;
}

/* Which subcommands take an option: f(lame), h(eatmap), t(opology),
 * l(oad). */
static const char *option_scope(int opt)
{
	switch (opt) {
	case OPT_PID:
		return "fh";
	case OPT_FOLDED:
	case OPT_ROOT:
	case OPT_OFFSETS:
	case OPT_WITHOUT:
		return "f";
	case OPT_WIDTH:
		return "fhl";
	case OPT_BIO:
	case OPT_STEP:
		return "h";
	case OPT_INTERVAL:
		return "t";
	default:
		return "fhtl";
	}
}

static int parse_root(const char *s, enum flame_root *out)
{
	static const char *const names[] = { "comm", "pid", "service", "none" };
	static const enum flame_root roots[] = { ROOT_COMM, ROOT_PID,
						 ROOT_SERVICE, ROOT_NONE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = roots[i];
			return 0;
		}
	}
	return -1;
}

static int parse_option(struct view_opts *o, int opt, const char *arg)
{
	char *end;
	unsigned long v;

	switch (opt) {
	case 'i':
		o->input = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_KAFKA:
		cli__deprecated("kmon-view", "--kafka", "-b/--brokers");
		/* fall through */
	case 'b':
		o->brokers = arg;
		break;
	case 'p':
		o->prefix = arg;
		break;
	case OPT_TITLE:
		o->title = arg;
		break;
	case OPT_FROM:
		if (parse__time(arg, &o->from_ns))
			return usage_error("--from: expected epoch seconds or "
					   "nanoseconds, got '%s'",
					   arg);
		o->has_from = true;
		break;
	case OPT_TO:
		if (parse__time(arg, &o->to_ns))
			return usage_error("--to: expected epoch seconds or "
					   "nanoseconds, got '%s'",
					   arg);
		o->has_to = true;
		break;
	case OPT_SERVICE:
		o->service = arg;
		break;
	case OPT_PID:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || *arg == '-')
			return usage_error("--pid: expected a number, got '%s'",
					   arg);
		o->pid = v;
		o->has_pid = true;
		break;
	case OPT_FOLDED:
		o->folded = true;
		break;
	case OPT_ROOT:
		if (parse_root(arg, &o->root))
			return usage_error(
				"--root: expected comm, pid, service "
				"or none, got '%s'",
				arg);
		break;
	case OPT_OFFSETS:
		o->offsets = true;
		break;
	case OPT_WITHOUT:
		if (!*arg || strchr(arg, '+'))
			return usage_error("--without: expected a function "
					   "name, got '%s'",
					   arg);
		o->without = xrealloc(o->without,
				      (o->nwithout + 1) * sizeof(*o->without));
		o->without[o->nwithout++] = arg;
		break;
	case OPT_WIDTH:
		v = strtoul(arg, &end, 10);
		if (*end || v < 200 || v > 20000)
			return usage_error("--width: expected 200..20000 "
					   "pixels, got '%s'",
					   arg);
		o->width = (unsigned)v;
		break;
	case OPT_BIO:
		o->source = HEAT_BIO;
		break;
	case OPT_STEP:
		if (cli__duration(arg, &o->step_ns))
			return usage_error("--step: expected a duration (5s, "
					   "1m, 500ms), got '%s'",
					   arg);
		break;
	case OPT_INTERVAL:
		if (cli__duration(arg, &o->interval_ns))
			return usage_error("--interval: expected a duration "
					   "(1s, 500ms), got '%s'",
					   arg);
		break;
	}
	return 0;
}

static int parse_args(struct view_opts *o, int argc, char **argv)
{
	char scope;
	int opt, ret;

	o->cmd = argv[1];
	if (strcmp(o->cmd, "flame") == 0)
		scope = 'f';
	else if (strcmp(o->cmd, "heatmap") == 0)
		scope = 'h';
	else if (strcmp(o->cmd, "topology") == 0)
		scope = 't';
	else if (strcmp(o->cmd, "load") == 0)
		scope = 'l';
	else
		return usage_error("unknown subcommand '%s'", o->cmd);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "i:o:b:p:", long_opts, NULL)) !=
	       -1) {
		if (opt == '?')
			return usage_error("%s", "bad option");
		if (opt == OPT_HELP) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (!strchr(option_scope(opt), scope))
			return usage_error("option %s does not apply here",
					   argv[optind - 1]);
		ret = parse_option(o, opt, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->input == !o->brokers)
		return usage_error("%s", "give one input: -i FILE or -b "
					 "BROKERS");
	if (o->has_from && o->has_to && o->from_ns >= o->to_ns)
		return usage_error("%s", "--from must be before --to");
	return 0;
}

int main(int argc, char **argv)
{
	struct view_opts o = {
		.prefix = "kmon.",
		.root = ROOT_COMM,
		.width = 1200,
		.source = HEAT_OFFCPU,
	};
	int ret;

	if (argc < 2)
		return usage_error("%s", "missing subcommand");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	ret = parse_args(&o, argc, argv);
	if (ret) {
		free(o.without);
		return ret;
	}
	/* a reader that closes stdout or a dot that dies is an error
	 * returned by write(), not a silent death */
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(o.cmd, "flame") == 0)
		ret = flame__run(&o);
	else if (strcmp(o.cmd, "heatmap") == 0)
		ret = heatmap__run(&o);
	else if (strcmp(o.cmd, "load") == 0)
		ret = load__run(&o);
	else
		ret = topology__run(&o);
	free(o.without);
	return ret;
}
