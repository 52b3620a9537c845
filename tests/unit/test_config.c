// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Config parsing: every error names file:line:col; valid files give the
 * expected struct. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/syscall_names.h"
#include "unit.h"

static char err[1024];

/* Parses text and returns the error message, or "ok". */
static const char *parse(const char *text, struct config *cfg)
{
	struct config scratch;

	if (!cfg)
		cfg = &scratch;
	err[0] = '\0';
	if (config__parse(cfg, "t.yaml", text, strlen(text), err, sizeof(err)))
		return err;
	if (cfg == &scratch)
		config__free(cfg);
	return "ok";
}

static void test_valid(void)
{
	struct config cfg;
	const char *text =
		"node: n1\n"
		"interval: 250ms\n"
		"services:\n"
		"  - name: web\n"
		"    match: { comm: nginx }\n"
		"  - name: db\n"
		"    match:\n"
		"      pid: 1234\n"
		"  - name: bin\n"
		"    match: { exe: \"/usr/*/nginx\" }\n"
		"  - name: cg\n"
		"    match: { cgroup: /system.slice }\n"
		"  - name: ct\n"
		"    match: { container: 0123456789abcdef }\n"
		"collectors:\n"
		"  syscall: { enabled: true, syscalls: [getppid, read] }\n"
		"exporters:\n"
		"  - { type: file, path: \"/tmp/x.json\" }\n"
		"  - type: kafka\n"
		"    brokers: \"127.0.0.1:9092\"\n"
		"    properties: { linger.ms: \"5\" }\n"
		"    drop: newest\n"
		"    tcp_key: service\n";

	CHECK_STR(parse(text, &cfg), "ok");
	CHECK_STR(cfg.node, "n1");
	CHECK(cfg.interval_ns == 250000000ULL);
	CHECK(cfg.nservices == 5);
	CHECK(cfg.services[2].type == SELECTOR_EXE);
	CHECK_STR(cfg.services[2].path, "/usr/*/nginx");
	CHECK(cfg.services[3].type == SELECTOR_CGROUP);
	CHECK_STR(cfg.services[3].path, "/system.slice");
	CHECK(cfg.services[4].type == SELECTOR_CONTAINER);
	CHECK_STR(cfg.services[0].name, "web");
	CHECK(cfg.services[0].type == SELECTOR_COMM);
	CHECK_STR(cfg.services[0].comm, "nginx");
	CHECK(cfg.services[1].type == SELECTOR_PID);
	CHECK(cfg.services[1].pid == 1234);
	CHECK(cfg.syscall.sw.enabled);
	CHECK(cfg.syscall.nsyscalls == 2);
	CHECK(cfg.syscall.syscalls[0] == syscall_number("getppid"));
	CHECK(cfg.nexporters == 2);
	CHECK(cfg.exporters[0].type == EXPORTER_FILE);
	CHECK_STR(cfg.exporters[0].path, "/tmp/x.json");
	CHECK(cfg.exporters[1].type == EXPORTER_KAFKA);
	CHECK_STR(cfg.exporters[1].topic_prefix, "kmon.");
	CHECK(cfg.exporters[1].nprops == 1);
	CHECK(cfg.exporters[1].drop == DROP_NEWEST);
	CHECK(cfg.exporters[1].tcp_key == KAFKA_TCP_KEY_SERVICE);
	config__free(&cfg);
	config__free(&cfg); /* idempotent */

	/* Defaults: 1s, every process, stdout. */
	CHECK_STR(parse("collectors: { syscall: { enabled: false } }\n", &cfg),
		  "ok");
	CHECK(cfg.interval_ns == 1000000000ULL);
	CHECK(!cfg.syscall.sw.enabled);
	CHECK(cfg.nexporters == 1 && strcmp(cfg.exporters[0].path, "-") == 0);
	CHECK(cfg.node[0] != '\0');
	config__free(&cfg);
}

static void test_errors(void)
{
	/* Each error path, with the exact position of the offending node. */
	CHECK_STR(parse("", NULL), "t.yaml:1:1: empty configuration");
	CHECK_STR(parse("- a\n", NULL),
		  "t.yaml:1:1: configuration: expected a mapping, got a list");
	CHECK_STR(parse("interval: 1s\nbogus: 1\n", NULL),
		  "t.yaml:2:1: unknown key 'bogus' (node, interval, services, "
		  "collectors, exporters)");
	CHECK_STR(parse("interval: 1s\ninterval: 2s\n", NULL),
		  "t.yaml:2:1: configuration: duplicate key 'interval'");
	CHECK_STR(parse("interval: 5\n", NULL),
		  "t.yaml:1:11: interval: '5' is not a duration (like 250us, "
		  "10ms, 5s, 1m)");
	CHECK_STR(parse("interval: fast\n", NULL),
		  "t.yaml:1:11: interval: 'fast' is not a duration (like "
		  "250us, 10ms, 5s, 1m)");
	CHECK_STR(parse("interval: 10ms\n", NULL),
		  "t.yaml:1:11: interval: 10ms is out of range");
	CHECK_STR(parse("interval: [1s]\n", NULL),
		  "t.yaml:1:11: interval: expected a scalar, got a list");
	CHECK_STR(parse("node: {a: 1}\n", NULL),
		  "t.yaml:1:7: node: expected a scalar, got a mapping");
	CHECK_STR(parse("services: {}\n", NULL),
		  "t.yaml:1:11: services: expected a list, got a mapping");
	CHECK_STR(parse("services:\n  - match: { comm: x }\n", NULL),
		  "t.yaml:2:5: service: missing key 'name'");
	CHECK_STR(parse("services:\n  - name: a\n", NULL),
		  "t.yaml:2:5: service: missing key 'match'");
	CHECK_STR(parse("services:\n  - name: a b\n    match: {comm: x}\n",
			NULL),
		  "t.yaml:2:11: name: 'a b' may hold only letters, digits, "
		  "'_', '.' and '-'");
	CHECK_STR(parse("services:\n  - name: a\n    match: { path: /bin/x }\n",
			NULL),
		  "t.yaml:3:14: match: unknown key 'path'");
	CHECK_STR(parse("services:\n  - name: a\n    match: { cgroup: x }\n",
			NULL),
		  "t.yaml:3:22: match.cgroup: a path starting with '/'");
	CHECK_STR(
		parse("services:\n  - name: a\n    match: { container: abc }\n",
		      NULL),
		"t.yaml:3:25: match.container: 12 to 64 hex digits");
	CHECK_STR(parse("services:\n  - name: a\n    match: { comm: "
			"abcdefghijklmnop }\n",
			NULL),
		  "t.yaml:3:20: match.comm: longer than 15 bytes");
	CHECK_STR(parse("services:\n  - name: a\n    match: { pid: 0 }\n",
			NULL),
		  "t.yaml:3:19: match.pid: 0 is out of range (1 to 4194304)");
	CHECK_STR(parse("services:\n  - name: a\n    match: { pid: -3 }\n",
			NULL),
		  "t.yaml:3:19: match.pid: expected a whole number, got '-3'");
	CHECK_STR(parse("services:\n  - name: a\n    match: { pid: 12x }\n",
			NULL),
		  "t.yaml:3:19: match.pid: expected a whole number, got '12x'");
	CHECK_STR(
		parse("services:\n  - name: a\n    match: { pid: 1, comm: x }\n",
		      NULL),
		"t.yaml:3:22: match: give one selector per service entry "
		"(add another entry with the same name)");
	CHECK_STR(
		parse("services:\n  - name: a\n    match: {}\n", NULL),
		"t.yaml:3:12: match: needs a selector (comm, pid, exe, cgroup, "
		"container, k8s or port)");
	CHECK_STR(parse("collectors:\n  tcpx: {}\n", NULL),
		  "t.yaml:2:3: collectors: unknown collector 'tcpx'");
	CHECK_STR(parse("collectors:\n  syscall: { enabled: yes }\n", NULL),
		  "t.yaml:2:23: enabled: expected true or false, got 'yes'");
	CHECK_STR(parse("collectors:\n  syscall: { typo: true }\n", NULL),
		  "t.yaml:2:14: collectors.syscall: unknown key 'typo'");
	CHECK_STR(
		parse("collectors:\n  syscall: { syscalls: [read, nosuch] }\n",
		      NULL),
		"t.yaml:2:31: syscalls: unknown syscall 'nosuch'");
	CHECK_STR(parse("exporters:\n  - { path: x }\n", NULL),
		  "t.yaml:2:5: exporter: missing key 'type'");
	CHECK_STR(parse("exporters:\n  - { type: s3 }\n", NULL),
		  "t.yaml:2:13: type: unknown exporter 's3' (file, kafka, "
		  "prometheus)");
	CHECK_STR(parse("exporters:\n  - { type: file }\n", NULL),
		  "t.yaml:2:5: exporter: file needs 'path' (\"-\" is stdout)");
	CHECK_STR(parse("exporters:\n  - { type: file, path: x, brokers: y }\n",
			NULL),
		  "t.yaml:2:28: exporter: unknown key 'brokers' for type file");
	CHECK_STR(parse("exporters:\n  - { type: kafka }\n", NULL),
		  "t.yaml:2:5: exporter: kafka needs 'brokers'");
	CHECK_STR(parse("exporters:\n  - { type: kafka, brokers: b, drop: "
			"middle }\n",
			NULL),
		  "t.yaml:2:38: drop: expected oldest or newest");
	CHECK_STR(parse("exporters:\n  - { type: kafka, brokers: b, tcp_key: "
			"port }\n",
			NULL),
		  "t.yaml:2:41: tcp_key: expected exchange or service");
	CHECK_STR(parse("exporters:\n  - { type: kafka, brokers: b }\n", NULL),
		  "ok");
	CHECK_STR(parse("exporters:\n  - { type: kafka, brokers: b, "
			"queue_messages: 0 }\n",
			NULL),
		  "t.yaml:2:48: queue_messages: 0 is out of range (1 to "
		  "10000000)");
	CHECK_STR(parse("exporters:\n  - type: kafka\n    brokers: b\n"
			"    properties: { no.such.property: 1 }\n",
			NULL),
		  "t.yaml:4:19: properties: No such configuration property: "
		  "\"no.such.property\"");
	/* A YAML syntax error: libyaml's own position and reason, and where
	 * the construct it could not finish began. */
	CHECK_STR(parse("interval: 1s\nservices: [a\n", NULL),
		  "t.yaml:3:1: did not find expected ',' or ']' (flow "
		  "sequence started at 2:11)");
	CHECK_STR(parse("interval: 1s\nservices:\n  - name: [broken\n", NULL),
		  "t.yaml:4:1: did not find expected ',' or ']' (flow "
		  "sequence started at 3:11)");
	CHECK_STR(parse("a: \"open\n", NULL),
		  "t.yaml:2:1: found unexpected end of stream (quoted "
		  "scalar started at 1:4)");
	CHECK_STR(parse("a: b: c\n", NULL),
		  "t.yaml:1:5: mapping values are not allowed in this context");
}

static void test_drop_counters(void)
{
	struct config cfg;

	CHECK_STR(parse("collectors:\n  drop: {}\n  counters:\n"
			"    tracepoints: [tcp:tcp_retransmit_skb, "
			"sched:sched_process_fork]\n"
			"    functions: [tcp_connect, tcp_v4_rcv.isra.0]\n",
			&cfg),
		  "ok");
	CHECK(cfg.drop.sw.enabled && !cfg.drop.sw.required);
	CHECK(cfg.drop.samples == CONFIG_DROP_SAMPLES);
	CHECK(cfg.counters.sw.enabled && cfg.counters.ntracepoints == 2);
	CHECK_STR(cfg.counters.tracepoints[1], "sched:sched_process_fork");
	CHECK(cfg.counters.nfunctions == 2);
	CHECK_STR(cfg.counters.functions[1], "tcp_v4_rcv.isra.0");
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  drop: { samples: 0, required: true }\n",
			&cfg),
		  "ok");
	CHECK(cfg.drop.samples == 0 && cfg.drop.sw.required);
	config__free(&cfg);

	CHECK_STR(parse("collectors:\n  drop: { samples: -1 }\n", NULL),
		  "t.yaml:2:20: samples: expected a whole number, got '-1'");
	CHECK_STR(parse("collectors:\n  drop: { samples: 100001 }\n", NULL),
		  "t.yaml:2:20: samples: 100001 is out of range (0 to 100000)");
	CHECK_STR(parse("collectors:\n  drop: { reasons: [x] }\n", NULL),
		  "t.yaml:2:11: collectors.drop: unknown key 'reasons'");
	CHECK_STR(parse("collectors:\n  counters: { kprobes: [x] }\n", NULL),
		  "t.yaml:2:15: collectors.counters: unknown key 'kprobes'");
	CHECK_STR(parse("collectors:\n  counters: { tracepoints: x }\n", NULL),
		  "t.yaml:2:28: tracepoints: expected a list, got a scalar");
	CHECK_STR(parse("collectors:\n  counters:\n    tracepoints: "
			"[sched:sched_process_fork, sched_process_exit]\n",
			NULL),
		  "t.yaml:3:45: tracepoints: 'sched_process_exit' is not "
		  "category:name");
	CHECK_STR(
		parse("collectors:\n  counters:\n    tracepoints: "
		      "[\"sched/fork\"]\n",
		      NULL),
		"t.yaml:3:19: tracepoints: 'sched/fork' is not category:name");
	CHECK_STR(parse("collectors:\n  counters:\n    tracepoints: "
			"[\"a:b:c\", \":b\"]\n",
			NULL),
		  "t.yaml:3:19: tracepoints: 'a:b:c' is not category:name");
	CHECK_STR(parse("collectors:\n  counters:\n    tracepoints: "
			"[a:b, a:b]\n",
			NULL),
		  "t.yaml:3:24: tracepoints: 'a:b' listed twice");
	CHECK_STR(
		parse("collectors:\n  counters:\n    functions: "
		      "[tcp_connect, \"tcp:connect\"]\n",
		      NULL),
		"t.yaml:3:30: functions: 'tcp:connect' is not a function name");
	CHECK_STR(parse("collectors:\n  counters:\n    functions: [\"\"]\n",
			NULL),
		  "t.yaml:3:17: functions: must not be empty");
}

/* The client side: on unless collectors.tcp or a service entry says
 * client: false. */
static void test_tcp_client(void)
{
	struct config cfg;

	CHECK_STR(parse("services:\n  - { name: a, match: { pid: 1 } }\n"
			"  - { name: b, match: { pid: 2 }, client: false }\n"
			"  - { name: c, match: { pid: 3 }, client: true }\n",
			&cfg),
		  "ok");
	CHECK(!cfg.services[0].no_client && cfg.services[1].no_client &&
	      !cfg.services[2].no_client && !cfg.tcp.no_client);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { client: false }\n", &cfg), "ok");
	CHECK(cfg.tcp.no_client);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { client: no }\n", NULL),
		  "t.yaml:2:18: collectors.tcp.client: expected true or false, "
		  "got 'no'");
	CHECK_STR(parse("services:\n  - { name: a, match: { pid: 1 }, "
			"client: 1 }\n",
			NULL),
		  "t.yaml:2:43: client: expected true or false, got '1'");
}

static void test_tcp(void)
{
	struct config cfg;

	CHECK_STR(parse("collectors:\n  tcp: { enabled: true }\n", &cfg), "ok");
	CHECK(cfg.tcp.sw.enabled && !cfg.tcp.sw.required);
	CHECK(cfg.tcp.requests == TCP_RECORDS_ALL);
	CHECK(cfg.tcp.protocols); /* identified unless switched off */
	CHECK(!cfg.tcp.no_load && !cfg.tcp.no_paths); /* on unless off */
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { protocols: false }\n", &cfg),
		  "ok");
	CHECK(cfg.tcp.sw.enabled && !cfg.tcp.protocols);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { load: false, paths: false }\n",
			&cfg),
		  "ok");
	CHECK(cfg.tcp.no_load && cfg.tcp.no_paths && cfg.tcp.protocols);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { load: true, paths: true }\n",
			&cfg),
		  "ok");
	CHECK(!cfg.tcp.no_load && !cfg.tcp.no_paths);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { paths: no }\n", NULL),
		  "t.yaml:2:17: collectors.tcp.paths: expected true or false, "
		  "got 'no'");
	CHECK_STR(parse("collectors:\n  tcp: { requests: none }\n", &cfg),
		  "ok");
	CHECK(cfg.tcp.sw.enabled && cfg.tcp.requests == TCP_RECORDS_NONE);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { requests: all }\n", &cfg), "ok");
	CHECK(cfg.tcp.requests == TCP_RECORDS_ALL);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp:\n    requests: { slow: 10ms }\n",
			&cfg),
		  "ok");
	CHECK(cfg.tcp.requests == TCP_RECORDS_SLOW);
	CHECK(cfg.tcp.slow_ns == 10000000ULL);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp:\n    requests: { sample: 100 }\n",
			&cfg),
		  "ok");
	CHECK(cfg.tcp.requests == TCP_RECORDS_SAMPLE && cfg.tcp.sample == 100);
	config__free(&cfg);
	CHECK_STR(parse("services:\n  - name: web\n    match: { port: 8080 }\n",
			&cfg),
		  "ok");
	CHECK(cfg.services[0].type == SELECTOR_PORT);
	CHECK(cfg.services[0].port == 8080);
	config__free(&cfg);

	CHECK_STR(
		parse("services:\n  - name: shop\n    name_from_label: app\n"
		      "    match: { k8s: { namespace: shop, pod: \"cart-*\" } }\n"
		      "  - name: any\n    match: { k8s: { pod: web } }\n",
		      &cfg),
		"ok");
	CHECK(cfg.services[0].type == SELECTOR_K8S);
	CHECK_STR(cfg.services[0].k8s_ns, "shop");
	CHECK_STR(cfg.services[0].path, "cart-*");
	CHECK_STR(cfg.services[0].name_label, "app");
	CHECK_STR(cfg.services[1].k8s_ns, "");
	CHECK_STR(cfg.services[1].path, "web");
	CHECK_STR(cfg.services[1].name_label, "");
	config__free(&cfg);
	CHECK_STR(parse("services:\n  - name: a\n    match: { k8s: {} }\n",
			NULL),
		  "t.yaml:3:19: match.k8s: needs namespace or pod");
	CHECK_STR(
		parse("services:\n  - name: a\n    match: { k8s: { ns: x } }\n",
		      NULL),
		"t.yaml:3:21: match.k8s: unknown key 'ns'");
	CHECK_STR(parse("services:\n  - name: a\n    match: { k8s: shop }\n",
			NULL),
		  "t.yaml:3:19: match.k8s: expected a mapping, got a scalar");

	CHECK_STR(
		parse("collectors:\n  tcp: { requests: some }\n", NULL),
		"t.yaml:2:20: requests: expected all, none, { slow: DURATION } "
		"or { sample: N }, got 'some'");
	CHECK_STR(parse("collectors:\n  tcp: { requests: { slow: 10 } }\n",
			NULL),
		  "t.yaml:2:28: requests.slow: '10' is not a duration (like "
		  "250us, 10ms, 5s, 1m)");
	CHECK_STR(parse("collectors:\n  tcp: { requests: { sample: 0 } }\n",
			NULL),
		  "t.yaml:2:30: requests.sample: 0 is out of range (1 to "
		  "1000000000)");
	CHECK_STR(parse("collectors:\n  tcp:\n    requests: { slow: 1ms, "
			"sample: 2 }\n",
			NULL),
		  "t.yaml:3:28: requests: give one of slow or sample");
	CHECK_STR(parse("collectors:\n  tcp: { requests: {} }\n", NULL),
		  "t.yaml:2:20: requests: give slow or sample");
	CHECK_STR(parse("collectors:\n  tcp: { requests: { fast: 1ms } }\n",
			NULL),
		  "t.yaml:2:22: requests: unknown key 'fast'");
	/* Known nodes: addresses and prefixes, host bits cleared. */
	CHECK_STR(parse("collectors:\n  tcp: { nodes: [10.1.2.3/16, 10.0.0.7, "
			"\"fd00::1/8\"] }\n",
			&cfg),
		  "ok");
	CHECK(cfg.tcp.nnodes == 3);
	CHECK(cfg.tcp.nodes[0].family == AF_INET &&
	      cfg.tcp.nodes[0].bits == 16);
	CHECK(!memcmp(cfg.tcp.nodes[0].addr, "\x0a\x01\x00\x00", 4));
	CHECK(cfg.tcp.nodes[1].bits == 32 && cfg.tcp.nodes[1].addr[3] == 7);
	CHECK(cfg.tcp.nodes[2].family == AF_INET6 &&
	      cfg.tcp.nodes[2].bits == 8);
	CHECK(cfg.tcp.nodes[2].addr[0] == 0xfd &&
	      cfg.tcp.nodes[2].addr[15] == 0);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  tcp: { nodes: [10.0.0.0/33] }\n", NULL),
		  "t.yaml:2:18: nodes: '10.0.0.0/33' is not an address or "
		  "address/prefix");
	CHECK_STR(parse("collectors:\n  tcp: { nodes: [web-1] }\n", NULL),
		  "t.yaml:2:18: nodes: 'web-1' is not an address or "
		  "address/prefix");
	CHECK_STR(parse("collectors:\n  tcp: { nodes: 10.0.0.0/8 }\n", NULL),
		  "t.yaml:2:17: nodes: expected a list, got a scalar");
	CHECK_STR(parse("collectors:\n  tcp: { latency: 1ms }\n", NULL),
		  "t.yaml:2:10: collectors.tcp: unknown key 'latency'");
	CHECK_STR(parse("services:\n  - name: a\n    match: { port: 0 }\n",
			NULL),
		  "t.yaml:3:20: match.port: 0 is out of range (1 to 65535)");
	CHECK_STR(
		parse("services:\n  - name: a\n    match: { port: 65536 }\n",
		      NULL),
		"t.yaml:3:20: match.port: 65536 is out of range (1 to 65535)");
}

/* An endpoint seen from its callers: a numeric address and a port. */
static void test_occupancy_endpoint(const char *svc)
{
	static const unsigned char v6[16] = { 0x20, 0x01, 0x0d,
					      0xb8, [15] = 5 };
	struct config cfg;
	char text[1024];

	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp:\n    occupancy:\n"
		 "      - { endpoint: \"10.1.2.3:5432\", window: 10s }\n"
		 "      - { endpoint: \"[2001:db8::5]:80\", tiers: 3 }\n"
		 "      - { service: api }\n",
		 svc);
	CHECK_STR(parse(text, &cfg), "ok");
	CHECK(cfg.tcp.noccupancy == 3);
	CHECK_STR(cfg.tcp.occupancy[0].endpoint, "10.1.2.3:5432");
	CHECK_STR(cfg.tcp.occupancy[0].service, "");
	CHECK(cfg.tcp.occupancy[0].family == AF_INET &&
	      cfg.tcp.occupancy[0].port == 5432 &&
	      !memcmp(cfg.tcp.occupancy[0].addr, "\x0a\x01\x02\x03", 4));
	CHECK(cfg.tcp.occupancy[0].tiers == 2 &&
	      cfg.tcp.occupancy[0].window_ns == 10000000000ULL);
	CHECK(cfg.tcp.occupancy[1].family == AF_INET6 &&
	      cfg.tcp.occupancy[1].port == 80 &&
	      !memcmp(cfg.tcp.occupancy[1].addr, v6, 16) &&
	      cfg.tcp.occupancy[1].tiers == 3);
	CHECK(cfg.tcp.occupancy[2].family == 0);
	config__free(&cfg);

	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { endpoint: "
		 "\"db.internal:5432\" } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:35: occupancy.endpoint: 'db.internal' is not a "
		  "numeric address");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { endpoint: "
		 "\"10.1.2.3\" } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:35: occupancy.endpoint: '10.1.2.3': expected "
		  "host:port or [v6 address]:port");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { endpoint: "
		 "\"10.1.2.3:80\", service: api } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:23: occupancy: give the service or the endpoint "
		  "(one of them)");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { endpoint: "
		 "\"10.1.2.3:80\" }, { endpoint: \"10.1.2.3:80\" } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:52: occupancy: endpoint '10.1.2.3:80' given twice");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { client: false, occupancy: [ { "
		 "endpoint: \"10.1.2.3:80\" } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:38: occupancy: endpoint '10.1.2.3:80' is seen from "
		  "the client side, which client: false turns off");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { load: false, occupancy: [ { "
		 "service: api } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:36: occupancy: needs the load accounting, which "
		  "load: false turns off");
}

static void test_occupancy(void)
{
	struct config cfg;
	const char *svc = "services:\n  - name: api\n    match: { port: 80 }\n"
			  "  - name: db\n    match: { port: 5432 }\n";
	char text[1024];

	snprintf(
		text, sizeof(text),
		"%scollectors:\n  tcp:\n    occupancy:\n"
		"      - { service: api }\n"
		"      - { service: db, tiers: 3, window: 10s, slide: 8000 }\n",
		svc);
	CHECK_STR(parse(text, &cfg), "ok");
	CHECK(cfg.tcp.sw.enabled && cfg.tcp.noccupancy == 2);
	CHECK_STR(cfg.tcp.occupancy[0].service, "api");
	CHECK(cfg.tcp.occupancy[0].tiers == 2 &&
	      !cfg.tcp.occupancy[0].window_ns && !cfg.tcp.occupancy[0].slide);
	CHECK(cfg.tcp.occupancy[1].slide == 8000);
	CHECK_STR(cfg.tcp.occupancy[1].service, "db");
	CHECK(cfg.tcp.occupancy[1].tiers == 3);
	CHECK(cfg.tcp.occupancy[1].window_ns == 10000000000ULL);
	config__free(&cfg);
	/* the services may come after the collectors */
	snprintf(text, sizeof(text),
		 "collectors:\n  tcp: { occupancy: [ { service: db } ] }\n%s",
		 svc);
	CHECK_STR(parse(text, NULL), "ok");

	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: api, "
		 "tiers: 5 } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:46: occupancy.tiers: 5 is out of range (1 to 4)");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: api, "
		 "tiers: 0 } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:46: occupancy.tiers: 0 is out of range (1 to 4)");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: api, "
		 "slide: 100 } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL), "t.yaml:7:46: occupancy.slide: 100 is "
				     "out of range (200 to 16384)");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { tiers: 2 } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL), "t.yaml:7:23: occupancy: give the service "
				     "or the endpoint (one of them)");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: web } ] }\n",
		 svc);
	CHECK_STR(
		parse(text, NULL),
		"t.yaml:7:23: occupancy: 'web' is not a service of this file");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { enabled: false, occupancy: [ { "
		 "service: api } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:39: occupancy: the tcp collector is not enabled");
	snprintf(text, sizeof(text),
		 "interval: 2s\n%scollectors:\n  tcp: { occupancy: [ { "
		 "service: api, window: 3s } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:8:23: occupancy.window: not a whole number of "
		  "intervals");
	snprintf(text, sizeof(text),
		 "interval: 2s\n%scollectors:\n  tcp: { occupancy: [ { "
		 "service: api, window: 1s } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:8:23: occupancy.window: not a whole number of "
		  "intervals");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: api }, "
		 "{ service: api } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:41: occupancy: service 'api' given twice");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: { service: api } }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:21: occupancy: expected a list, got a mapping");
	snprintf(text, sizeof(text),
		 "%scollectors:\n  tcp: { occupancy: [ { service: api, "
		 "layers: 2 } ] }\n",
		 svc);
	CHECK_STR(parse(text, NULL),
		  "t.yaml:7:39: occupancy: unknown key 'layers'");
	test_occupancy_endpoint(svc);
}

static void test_bio(void)
{
	struct config cfg;

	CHECK_STR(parse("collectors:\n  bio: {}\n", &cfg), "ok");
	CHECK(cfg.bio.sw.enabled && !cfg.bio.sw.required && !cfg.bio.slow);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  bio: { enabled: false, slow: 100ms, "
			"required: true }\n",
			&cfg),
		  "ok");
	CHECK(!cfg.bio.sw.enabled && cfg.bio.sw.required && cfg.bio.slow);
	CHECK(cfg.bio.slow_ns == 100000000ULL);
	config__free(&cfg);
	/* 0 is a threshold too: every I/O. */
	CHECK_STR(parse("collectors:\n  bio: { slow: 0ns }\n", &cfg), "ok");
	CHECK(cfg.bio.slow && cfg.bio.slow_ns == 0);
	config__free(&cfg);

	CHECK_STR(parse("collectors:\n  bio: { slow: 100 }\n", NULL),
		  "t.yaml:2:16: slow: '100' is not a duration (like 250us, "
		  "10ms, 5s, 1m)");
	CHECK_STR(parse("collectors:\n  bio: { slow: 2h }\n", NULL),
		  "t.yaml:2:16: slow: 2h is out of range");
	CHECK_STR(parse("collectors:\n  bio: { slow: [1ms] }\n", NULL),
		  "t.yaml:2:16: slow: expected a scalar, got a list");
	CHECK_STR(parse("collectors:\n  bio: { enabled: yes please }\n", NULL),
		  "t.yaml:2:19: enabled: expected true or false, got 'yes "
		  "please'");
	CHECK_STR(parse("collectors:\n  bio: { disks: [vda] }\n", NULL),
		  "t.yaml:2:10: collectors.bio: unknown key 'disks'");
	CHECK_STR(parse("collectors:\n  bio: true\n", NULL),
		  "t.yaml:2:8: collectors.bio: expected a mapping, got a "
		  "scalar");
}

static void test_missing_file(void)
{
	struct config cfg;

	CHECK(config__load(&cfg, "/nonexistent/kmond.yaml", err, sizeof(err)) ==
	      -1);
	CHECK_STR(err, "/nonexistent/kmond.yaml:1:1: cannot open: No such "
		       "file or directory");
}

static void test_file(void)
{
	char path[] = "/tmp/kmond-test-XXXXXX";
	struct config cfg;
	int fd = mkstemp(path);
	const char *text = "interval: 2s\nnode: x\n";

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	CHECK(config__load(&cfg, path, err, sizeof(err)) == 0);
	CHECK(cfg.interval_ns == 2000000000ULL);
	CHECK_STR(cfg.file, path);
	config__free(&cfg);
	unlink(path);
}

static void test_offcpu(void)
{
	struct config cfg;

	CHECK_STR(parse("collectors:\n  offcpu: {}\n", &cfg), "ok");
	CHECK(cfg.offcpu.sw.enabled && !cfg.offcpu.sw.required);
	CHECK(cfg.offcpu.state == OFFCPU_SLEEP);
	CHECK(cfg.offcpu.min_block_ns == 1000000);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  offcpu: { state: all, min_block: "
			"250us, required: true }\n",
			&cfg),
		  "ok");
	CHECK(cfg.offcpu.state == OFFCPU_ALL && cfg.offcpu.sw.required);
	CHECK(cfg.offcpu.min_block_ns == 250000);
	config__free(&cfg);
	CHECK_STR(parse("collectors:\n  offcpu: { enabled: false }\n", &cfg),
		  "ok");
	CHECK(!cfg.offcpu.sw.enabled);
	config__free(&cfg);

	CHECK_STR(parse("collectors:\n  offcpu: { state: running }\n", NULL),
		  "t.yaml:2:20: state: expected sleep or all, got 'running'");
	CHECK_STR(parse("collectors:\n  offcpu: { min_block: 1 }\n", NULL),
		  "t.yaml:2:24: min_block: '1' is not a duration (like 250us, "
		  "10ms, 5s, 1m)");
	CHECK_STR(parse("collectors:\n  offcpu: { min_block: 2h }\n", NULL),
		  "t.yaml:2:24: min_block: 2h is out of range");
	CHECK_STR(parse("collectors:\n  offcpu: { stacks: 3 }\n", NULL),
		  "t.yaml:2:13: collectors.offcpu: unknown key 'stacks'");
}

static void test_prometheus(void)
{
	struct config cfg;

	CHECK_STR(parse("exporters:\n  - { type: prometheus }\n", &cfg), "ok");
	CHECK(cfg.exporters[0].type == EXPORTER_PROMETHEUS);
	CHECK_STR(cfg.exporters[0].listen, "127.0.0.1:9464");
	CHECK(cfg.exporters[0].expire_ns == 600000000000ULL);
	CHECK(cfg.exporters[0].max_series == 50000);
	config__free(&cfg);
	CHECK_STR(
		parse("exporters:\n  - type: prometheus\n    listen: \"[::1]:9100\"\n"
		      "    expire: 5m\n    max_series: 10\n",
		      &cfg),
		"ok");
	CHECK_STR(cfg.exporters[0].listen, "[::1]:9100");
	CHECK(cfg.exporters[0].expire_ns == 300000000000ULL);
	CHECK(cfg.exporters[0].max_series == 10);
	config__free(&cfg);
	CHECK_STR(parse("exporters:\n  - { type: prometheus, listen: 9464 }\n",
			NULL),
		  "t.yaml:2:33: listen: '9464': expected host:port or [v6 "
		  "address]:port");
	CHECK_STR(
		parse("exporters:\n  - { type: prometheus, listen: \"h:99999\" }\n",
		      NULL),
		"t.yaml:2:33: listen: '99999' is no port (1 to 65535)");
	CHECK_STR(
		parse("exporters:\n  - { type: prometheus, listen: \"[x]:1\" }\n",
		      NULL),
		"t.yaml:2:33: listen: 'x' is no IPv6 address");
	CHECK_STR(parse("exporters:\n  - { type: prometheus, expire: 10 }\n",
			NULL),
		  "t.yaml:2:33: expire: '10' is not a duration (like 250us, "
		  "10ms, 5s, 1m)");
	CHECK_STR(parse("exporters:\n  - { type: prometheus, max_series: 0 }\n",
			NULL),
		  "t.yaml:2:37: max_series: 0 is out of range (1 to 10000000)");
	CHECK_STR(
		parse("exporters:\n  - { type: prometheus, path: x }\n", NULL),
		"t.yaml:2:25: exporter: unknown key 'path' for type prometheus "
		"(listen, expire, max_series)");
	CHECK_STR(
		parse("exporters:\n  - { type: prometheus }\n"
		      "  - { type: prometheus, listen: \"127.0.0.1:9464\" }\n",
		      NULL),
		"t.yaml:3:5: exporters: a second prometheus exporter on "
		"127.0.0.1:9464");
}

int main(void)
{
	test_prometheus();
	test_valid();
	test_errors();
	test_drop_counters();
	test_offcpu();
	test_bio();
	test_tcp();
	test_tcp_client();
	test_occupancy();
	test_missing_file();
	test_file();
	return unit_done("config");
}
