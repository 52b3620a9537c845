// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kmond: per-node eBPF monitoring daemon. Exit codes: 0 ok, 2 bad config or
 * usage, 1 runtime failure. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "daemon/daemon.h"
#include "lib/duration.h"
#include "lib/heap.h"
#include "lib/log.h"

#define KMOND_VERSION "0.1.0"
/* The installed config (make install puts it there); the Makefile gives
 * SYSCONFDIR's. */
#ifndef KMOND_DEFAULT_CONFIG
#define KMOND_DEFAULT_CONFIG "/etc/kmond/kmond.yaml"
#endif
#define DEFAULT_CONFIG KMOND_DEFAULT_CONFIG

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kmond [-c FILE] [--check] [--duration DURATION] [--probe] [--watch] [-v]\n"
		"  -c, --config FILE   configuration (default " DEFAULT_CONFIG
		")\n"
		"      --check         validate the configuration and probe attach, then exit\n"
		"      --duration DURATION\n"
		"                      run for DURATION (250ms, 5s, 1m; a bare number is\n"
		"                      seconds), then exit cleanly\n"
		"      --probe         print the attach method of every probe on this kernel\n"
		"      --watch         reload when the configuration file changes (ConfigMaps)\n"
		"      --version       print the version\n"
		"  -v, --verbose       log debug lines\n"
		"signals:\n"
		"  SIGHUP              re-read the configuration (a bad one is refused, the\n"
		"                      running one stays); file sinks reopen their files\n"
		"  SIGINT, SIGTERM     collect one last time, flush and exit 0\n"
		"environment (the tests use them):\n"
		"  KMOND_PROBE_DENY=ENTRY,...\n"
		"                      treat attach methods as absent; ENTRY is a target\n"
		"                      (sched_switch) or method:target (tp_btf:sched_switch)\n"
		"  KMOND_PROBE_FAIL_LOAD=ENTRY,...\n"
		"                      make the kernel refuse these programs at load (also a\n"
		"                      method alone, iter, or a program's name)\n"
		"exit codes: 0 ok, 2 bad configuration or usage, 1 runtime failure\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "probe", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "watch", no_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = DEFAULT_CONFIG;
	bool check = false, probe = false;
	uint64_t duration_ns = 0;
	struct config cfg;
	char err[1024];
	int opt;

	heap__hold(); /* through the start's BPF loads: daemon__run settles it */
	while ((opt = getopt_long(argc, argv, "c:vh", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'd':
			if (duration__parse(optarg, DURATION_ARG,
					    &duration_ns) ||
			    !duration_ns) {
				fprintf(stderr,
					"kmond: --duration: '%s' is not a "
					"duration (like 500ms, 5s, 1m)\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			probe = true;
			break;
		case 'V':
			printf("kmond %s\n", KMOND_VERSION);
			return 0;
		case 'v':
			log_verbose = true;
			break;
		case 'W':
			daemon_watch_config = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (probe) {
		daemon__probe();
		return 0;
	}
	if (daemon__load_config(&cfg, path, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (check) {
		int ret = daemon__check(&cfg);

		if (ret == 0)
			printf("%s: ok\n", path);
		config__free(&cfg);
		return ret;
	}
	return daemon__run(&cfg, duration_ns);
}
