/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmon-view: pictures from kmond's records (flame graphs, heatmaps, the
 * topology graph). Every subcommand reads all its input first, validates
 * each record, and only then renders, so bad input gives an error and an
 * exit code, never a broken picture. */
#ifndef KMON_VIEW_H
#define KMON_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/json_parse.h"
#include "lib/xalloc.h"
#include "lib/strbuf.h"

/* Exit codes: the daemon's contract. */
#define VIEW_OK 0
#define VIEW_RUNTIME 1 /* Kafka unreachable, output not writable, dot failed */
#define VIEW_BAD_INPUT 2 /* bad usage or bad input */

enum flame_root {
	ROOT_COMM, /* one bottom frame per process name (offcputime -f style) */
	ROOT_PID, /* "comm [pid]" */
	ROOT_SERVICE, /* the service, "[no service]" when none */
	ROOT_NONE,
};

enum heat_source {
	HEAT_OFFCPU,
	HEAT_BIO,
};

struct view_opts {
	const char *cmd;
	const char *input; /* -i FILE, "-" = stdin */
	const char *brokers; /* -b BROKERS */
	const char *prefix; /* -p PREFIX, "kmon." */
	const char *output; /* -o FILE, NULL or "-" = stdout */
	const char *title;

	/* filters */
	const char *service;
	bool has_pid;
	uint64_t pid;
	bool has_from, has_to;
	uint64_t from_ns, to_ns; /* window [from, to) */

	/* flame */
	bool folded;
	bool offsets; /* keep "+0x1a" in frame names */
	const char **without; /* leave out stacks holding one of these */
	size_t nwithout;
	enum flame_root root;
	unsigned width;

	/* heatmap */
	enum heat_source source;
	uint64_t step_ns; /* 0: chosen from the time range */

	/* topology */
	uint64_t interval_ns; /* 0: estimated from the records */
};

/* Called for each record of a wanted kind; where is "FILE:LINE" (or
 * "TOPIC[PARTITION]@OFFSET" for Kafka). Returns 0, or VIEW_BAD_INPUT after
 * printing "where: message". */
typedef int (*view_record_fn)(const struct json_value *rec, const char *kind,
			      const char *where, void *ctx);

/* Reads every record whose kind is in kinds (NULL-terminated) from -i or
 * -b; other kinds are skipped. Returns 0 or a VIEW_* exit code (the
 * error already printed). */
int input__read(const struct view_opts *o, const char *const *kinds,
		view_record_fn fn, void *ctx);
int input__read_kafka(const struct view_opts *o, const char *const *kinds,
		      view_record_fn fn, void *ctx);
/* One record (a line, a message): a JSON object with a string "kind"; fn
 * gets it when its kind is one of kinds. */
int input__record(const char *rec, size_t len, const char *where,
		  const char *const *kinds, view_record_fn fn, void *ctx);
/* One Kafka message: checked like a line of a file. */
int input__message(const char *msg, size_t len, const char *where,
		   const char *const *kinds, view_record_fn fn, void *ctx);
/* Name of the input for messages: the file, "stdin" or the brokers. */
const char *input__name(const struct view_opts *o);

/* Field readers: each prints "where: kind: key: why" and returns
 * VIEW_BAD_INPUT when the field is missing or of the wrong type. */
int field__u64(const struct json_value *rec, const char *kind,
	       const char *where, const char *key, uint64_t *out);
int field__str(const struct json_value *rec, const char *kind,
	       const char *where, const char *key, const char **out);
/* A string or null (*out = NULL). */
int field__str_or_null(const struct json_value *rec, const char *kind,
		       const char *where, const char *key, const char **out);
int field__array(const struct json_value *rec, const char *kind,
		 const char *where, const char *key,
		 const struct json_value **out);
/* Request outcomes of a topology or load record (docs/design/outcomes.md):
 * *has is false, and the counts 0, when it carries none (a kmond before
 * them); outcomes without errors is bad input. */
int field__outcomes(const struct json_value *rec, const char *kind,
		    const char *where, bool *has, uint64_t *outcomes,
		    uint64_t *errors);
void view__error(const char *where, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The common fields (ts, node) and the filters (time window, --service,
 * --pid). *keep says whether the record passes. A filter on a field the
 * record lacks (a histogram without pid) drops the record. */
/* " match the filters" when any filter is set, else "": ends a "no
 * records" message. */
const char *filter__suffix(const struct view_opts *o);
int filter__check(const struct view_opts *o, const struct json_value *rec,
		  const char *kind, const char *where, bool *keep);

/* Writes out to -o (atomically: a temporary file renamed into place) or
 * stdout. Returns 0 or VIEW_RUNTIME. */
int output__write(const struct view_opts *o, const struct strbuf *out);

/* SVG and text helpers */
/* XML-escapes s; bytes XML 1.0 forbids (control bytes, U+FFFE/U+FFFF)
 * become U+FFFD so the document always parses. */
void svg__escape(struct strbuf *sb, const char *s);
/* "850 ns", "12.3 µs", "4.56 ms", "1.23 s" */
void fmt__duration(char *buf, size_t len, double ns);
/* "2025-11-22 08:31:05" (UTC) */
void fmt__time(char *buf, size_t len, uint64_t ts_ns, bool with_date);
/* "1.2k", "3.4M" for big counts, the number otherwise */
void fmt__count(char *buf, size_t len, double v);
/* Parses "1700000000", "1700000000.5" (seconds) or a nanosecond value
 * (>= 1e12 is taken as ns). */
int parse__time(const char *s, uint64_t *out);

int flame__run(const struct view_opts *o);
int heatmap__run(const struct view_opts *o);
int topology__run(const struct view_opts *o);
int load__run(const struct view_opts *o);

#endif
