/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmond's configuration: parsed from YAML with libyaml into this validated
 * struct. A reload builds a new struct beside the running one and swaps
 * only when the new one is valid. */
#ifndef KMON_CONFIG_H
#define KMON_CONFIG_H

#include <stdbool.h>

#include "lib/cidr.h"
#include <stddef.h>
#include <stdint.h>

#define CONFIG_NAME_MAX 64
#define CONFIG_COMM_MAX 16 /* TASK_COMM_LEN */
#define CONFIG_MAX_SERVICES 256
#define CONFIG_MAX_EXPORTERS 8
#define CONFIG_PROMETHEUS_LISTEN "127.0.0.1:9464" /* loopback by default */
#define CONFIG_MAX_SYSCALLS 512
#define CONFIG_MAX_COUNTERS 64 /* tracepoints, and functions, each */
#define CONFIG_EVENT_MAX 128 /* "category:name" or a function name */
#define CONFIG_DROP_SAMPLES 16
#define CONFIG_OFFCPU_MIN_BLOCK_NS 1000000ULL

#define CONFIG_PATH_MAX 256

enum selector_type {
	SELECTOR_COMM, /* the process name, as the kernel keeps it */
	SELECTOR_PID, /* a process and its descendants */
	SELECTOR_EXE, /* executable path, or a glob of it */
	SELECTOR_CGROUP, /* cgroup path prefix, in any hierarchy */
	SELECTOR_CONTAINER, /* container id (or a prefix of 12+ chars) */
	SELECTOR_PORT, /* the process listening on a TCP port */
	SELECTOR_K8S, /* the containers of Kubernetes pods */
};

struct service_cfg {
	char name[CONFIG_NAME_MAX];
	enum selector_type type;
	char comm[CONFIG_COMM_MAX];
	uint32_t pid;
	uint16_t port;
	char path[CONFIG_PATH_MAX]; /* exe glob, cgroup prefix, container id,
				       pod name glob ("": any) */
	char k8s_ns[CONFIG_NAME_MAX]; /* k8s: the pod's namespace ("": any) */
	/* name_from_label: the service is named by this label of the
	 * process's pod when it has it, else by name ("": always name) */
	char name_label[CONFIG_PATH_MAX];
	bool no_client; /* client: false: no client-side tcp records */
};

/* What every collector's section says first. */
struct collector_switch {
	bool enabled;
	bool required; /* a failure to attach stops kmond */
};

struct syscall_cfg {
	struct collector_switch sw;
	/* Empty: every syscall. Otherwise only these numbers are counted. */
	int syscalls[CONFIG_MAX_SYSCALLS];
	int nsyscalls;
};

struct drop_cfg {
	struct collector_switch sw;
	/* Drops reported one by one per (reason, stack, owner) and interval;
	 * the rest of that interval go out as one record with a count. */
	uint32_t samples;
};

struct bio_cfg {
	struct collector_switch sw;
	/* Report each I/O of at least slow_ns (issue -> complete) with the
	 * submitter's kernel stack; off when !slow. */
	bool slow;
	uint64_t slow_ns;
};

struct counters_cfg {
	struct collector_switch sw;
	/* "category:name", checked against tracefs when applied */
	char tracepoints[CONFIG_MAX_COUNTERS][CONFIG_EVENT_MAX];
	int ntracepoints;
	/* kernel functions: need fentry or kprobes */
	char functions[CONFIG_MAX_COUNTERS][CONFIG_EVENT_MAX];
	int nfunctions;
};

enum offcpu_state {
	OFFCPU_SLEEP, /* blocked: TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE */
	OFFCPU_ALL, /* any switch-out, preemption included */
};

struct offcpu_cfg {
	struct collector_switch sw;
	enum offcpu_state state;
	uint64_t min_block_ns; /* shorter blocks are not counted */
};

/* Which finished requests become tcp records (topology counts all). */
enum tcp_requests_cfg {
	TCP_RECORDS_ALL,
	TCP_RECORDS_NONE,
	TCP_RECORDS_SLOW, /* latency >= slow_ns */
	TCP_RECORDS_SAMPLE, /* one in `sample` */
};

#define CONFIG_MAX_NODES 256
/* collectors.tcp.routes: its default and its largest */
#define CONFIG_ROUTES 200
#define CONFIG_MAX_ROUTES 10000
#define CONFIG_MAX_OCC_TARGETS \
	64 /* TCP_MAX_TARGETS: a slot each in the kernel */
#define CONFIG_MAX_TIERS 4 /* OCC_MAX_TIERS */
/* occupancy.slide: OCC_MIN_SAMPLES, and a sequence of 32768 steps */
#define CONFIG_MIN_SLIDE 200
#define CONFIG_MAX_SLIDE 16384

/* collectors.tcp.occupancy: a service (its server side), or an endpoint
 * monitored callers call (its client side), whose tiers are estimated
 * from its response times (occupancy records). */
struct occupancy_target_cfg {
	char service[CONFIG_NAME_MAX]; /* "" for an endpoint */
	char endpoint[CONFIG_NAME_MAX]; /* as written, "" for a service */
	uint8_t addr[16]; /* the endpoint: IPv4 in the first 4 */
	uint16_t port, family; /* AF_INET, AF_INET6; 0 for a service */
	uint32_t tiers;
	uint64_t window_ns; /* 0: per interval only */
	uint32_t slide; /* requests of a sliding window, 0: none */
	size_t line, col; /* where the file gives it (0-based) */
};

struct tcp_cfg {
	struct collector_switch sw;
	enum tcp_requests_cfg requests;
	uint64_t slow_ns;
	uint32_t sample;
	/* Addresses of other nodes: their clients keep a topology edge each;
	 * other remote clients share one edge per server, src "external". */
	struct cidr nodes[CONFIG_MAX_NODES];
	uint32_t nnodes;
	bool no_client; /* client: false: client-side tracking off for all */
	bool no_load; /* load: false: no load records (nor occupancy) */
	bool no_paths; /* paths: false: no parent links (ids kept) */
	/* outcomes: false: no status, error, method, route (nor the
	 * kernel's capture of each message's first bytes) */
	bool no_outcomes;
	/* routes: distinct HTTP routes kept per service, past it `other` */
	uint32_t routes;
	/* identify each connection's protocol (default on; read when the
	 * collector starts) */
	bool protocols;
	/* read TLS connections in plaintext through uprobes on OpenSSL
	 * (default on; read when the collector starts) */
	bool tls;
	struct occupancy_target_cfg occupancy[CONFIG_MAX_OCC_TARGETS];
	int noccupancy;
};

enum exporter_type {
	EXPORTER_FILE,
	EXPORTER_KAFKA,
	EXPORTER_PROMETHEUS,
};

enum drop_policy {
	DROP_OLDEST,
	DROP_NEWEST,
};

/* How tcp records are keyed in Kafka (docs/kafka.md). */
enum kafka_tcp_key {
	KAFKA_TCP_KEY_EXCHANGE, /* req_seq: both ends in one partition */
	KAFKA_TCP_KEY_SERVICE, /* as every other record */
};

struct kafka_property {
	char *key;
	char *value;
};

struct exporter_cfg {
	enum exporter_type type;
	char *path; /* file: "-" is stdout */
	/* kafka */
	char *brokers;
	char *topic_prefix;
	struct kafka_property *props;
	int nprops;
	uint64_t queue_messages; /* bound of the outage queue */
	uint64_t queue_bytes;
	enum drop_policy drop;
	enum kafka_tcp_key tcp_key;
	uint64_t flush_timeout_ns; /* bounded flush at exit */
	/* prometheus */
	char *listen; /* "host:port" or "[v6]:port" */
	uint64_t expire_ns; /* a series not updated for this goes */
	uint64_t max_series;
};

struct config {
	char *file;
	char node[CONFIG_NAME_MAX];
	uint64_t interval_ns;
	struct service_cfg services[CONFIG_MAX_SERVICES];
	int nservices;
	struct syscall_cfg syscall;
	struct drop_cfg drop;
	struct bio_cfg bio;
	struct counters_cfg counters;
	struct offcpu_cfg offcpu;
	struct tcp_cfg tcp;
	struct exporter_cfg exporters[CONFIG_MAX_EXPORTERS];
	int nexporters;
};

/* Parses and validates path into *cfg. On error returns -1 (after freeing
 * what it built) and writes "file:line:col: message" into err. */
int config__load(struct config *cfg, const char *path, char *err,
		 size_t errlen);
/* Same, from a string; name is used in messages. */
int config__parse(struct config *cfg, const char *name, const char *text,
		  size_t len, char *err, size_t errlen);
void config__free(struct config *cfg); /* NULL-safe, idempotent */

#endif
