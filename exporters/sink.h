/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The interface every sink implements. The exporter hands each finished
 * record to every sink; a sink must never block the caller on the network
 * (the BPF drain loop runs on the same thread). */
#ifndef KMON_SINK_H
#define KMON_SINK_H

#include <stdint.h>

#include "lib/record.h"

struct exporter_cfg;

struct sink_stats {
	uint64_t sent; /* records accepted by send() */
	uint64_t delivered; /* records known to have reached their sink */
	uint64_t failed; /* records that will never be delivered */
	uint64_t dropped; /* of failed: dropped by the queue bound's policy */
	uint64_t queued; /* records waiting for delivery right now */
};

struct sink;

struct sink_ops {
	const char *type; /* as in the config: "file", "kafka", "prometheus" */
	/* Returns 0 and *out, or -errno with a message in err. */
	int (*open)(struct sink **out, const struct exporter_cfg *cfg,
		    char *err, size_t errlen);
	/* Never blocks; returns 0 or -errno (the record counts as failed). */
	int (*send)(struct sink *s, const struct record *r);
	/* Called every interval (timeout_ms 0) and at exit (bounded wait). */
	void (*flush)(struct sink *s, int timeout_ms);
	/* SIGHUP: reopen files (log rotation). May be NULL. */
	int (*reopen)(struct sink *s);
	void (*stats)(struct sink *s, struct sink_stats *st);
	void (*close)(struct sink *s); /* NULL-safe */
};

/* The file sink writes its records 256 KiB at a time: at a record per
 * request, writing them was half of kmond's CPU (64 KiB writes), and on
 * ext4 each write has its own price beyond the bytes'. kmond's CPU per
 * tcp record (client side, nginx under wrk): 64 KiB, 0.265 us; 128 KiB,
 * 0.244; 256 KiB, 0.223; 512 KiB, 0.221 (and 4 KiB a fifth more than 64). */
#define FILE_SINK_BUFFER_BYTES (256 * 1024)

extern const struct sink_ops file_sink_ops;
extern const struct sink_ops kafka_sink_ops;
extern const struct sink_ops prometheus_sink_ops;

#endif
