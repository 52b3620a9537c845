// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A file is read with read(2) behind poll(2), not stdio, so a quiet pipe
 * (kmond | kmon-trace -i -) still lets traces time out while nothing
 * arrives. Kafka is read like kmon-topo reads it: a consumer group,
 * the topic possibly not there yet. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "consumers/common/kafka_group.h"
#include "consumers/common/reader_clock.h"
#include "source.h"
#include "lib/clock.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

/* A line longer than this is refused, not buffered without end. */
#define MAX_LINE (4u << 20)

struct source {
	/* file */
	int fd;
	const char *path;
	struct strbuf pending; /* the start of a line not yet ended */
	uint64_t line;
	bool discarding; /* inside a line past MAX_LINE */
	bool regular; /* a regular file, read as fast as the disk goes */
	/* Kafka */
	rd_kafka_t *rk;
	struct reader_clock *clock;
	char topic[512];
	char name[600];
};

struct source *source__open(const struct source_opts *o)
{
	struct source *s = xcalloc(1, sizeof(*s));
	const char *topic = s->topic;
	static const bool stamped = true;
	struct stat st;

	s->fd = -1;
	if (o->input) {
		s->path = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
		s->fd = strcmp(o->input, "-") == 0 ?
				0 :
				open(o->input, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			fprintf(stderr, "kmon-trace: %s: %s\n", o->input,
				strerror(errno));
			free(s);
			return NULL;
		}
		snprintf(s->name, sizeof(s->name), "%s", s->path);
		s->regular = fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode);
		return s;
	}
	s->rk = kafka_group__new(
		&(struct kafka_group_opts){ .who = "kmon-trace",
					    .brokers = o->brokers,
					    .group = o->group,
					    .ends = true,
					    .props = o->props,
					    .nprops = o->nprops });
	snprintf(s->topic, sizeof(s->topic), "%stcp", o->prefix);
	s->clock = reader_clock__new(&topic, &stamped, 1);
	if (!s->rk || kafka_group__subscribe(s->rk, "kmon-trace", topic)) {
		source__close(s);
		return NULL;
	}
	snprintf(s->name, sizeof(s->name), "%s from %s as group %s", topic,
		 o->brokers, o->group);
	return s;
}

void source__close(struct source *s)
{
	if (!s)
		return;
	if (s->fd > 0)
		close(s->fd);
	if (s->rk) {
		rd_kafka_consumer_close(s->rk); /* commits what was read */
		rd_kafka_destroy(s->rk);
	}
	reader_clock__free(s->clock);
	strbuf__free(&s->pending);
	free(s);
}

const char *source__name(const struct source *s)
{
	return s->name;
}

bool source__regular_file(const struct source *s)
{
	return s->regular;
}

static void one_line(struct source *s, const char *text, size_t len,
		     source_record_fn fn, void *ctx)
{
	char where[512];

	s->line++;
	if (text && len && text[len - 1] == '\r')
		len--;
	snprintf(where, sizeof(where), "%s:%llu", s->path,
		 (unsigned long long)s->line);
	fn(text, len, where, ctx);
}

/* Splits what was read into lines; keeps an unfinished one. */
static void take_lines(struct source *s, const char *buf, size_t len,
		       source_record_fn fn, void *ctx)
{
	const char *nl;

	while (len && (nl = memchr(buf, '\n', len))) {
		size_t n = nl - buf;

		if (s->discarding) {
			s->discarding = false;
		} else if (s->pending.len) {
			strbuf__add(&s->pending, buf, n);
			one_line(s, s->pending.buf, s->pending.len, fn, ctx);
			strbuf__reset(&s->pending);
		} else {
			one_line(s, buf, n, fn, ctx);
		}
		buf += n + 1;
		len -= n + 1;
	}
	if (!len || s->discarding)
		return;
	if (s->pending.len + len > MAX_LINE) {
		/* one record the reader refuses as too long (NULL) */
		one_line(s, NULL, 0, fn, ctx);
		strbuf__reset(&s->pending);
		s->discarding = true;
		return;
	}
	strbuf__add(&s->pending, buf, len);
}

static int poll_file(struct source *s, int timeout_ms, source_record_fn fn,
		     void *ctx)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	char buf[65536];
	ssize_t n;

	if (poll(&p, 1, timeout_ms) < 0)
		return errno == EINTR ? 0 : -1;
	if (!p.revents)
		return 0;
	n = read(s->fd, buf, sizeof(buf));
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		fprintf(stderr, "kmon-trace: %s: %s\n", s->path,
			strerror(errno));
		return -1;
	}
	if (n == 0) { /* a last line without its newline still counts */
		if (s->pending.len && !s->discarding)
			one_line(s, s->pending.buf, s->pending.len, fn, ctx);
		strbuf__reset(&s->pending);
		return 1;
	}
	take_lines(s, buf, n, fn, ctx);
	return 0;
}

static int poll_kafka(struct source *s, int timeout_ms, source_record_fn fn,
		      void *ctx)
{
	rd_kafka_message_t *m = rd_kafka_consumer_poll(s->rk, timeout_ms);
	char where[600];
	uint64_t ts;

	if (!m)
		return 0;
	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		reader_clock__at_end(s->clock, 0, m->partition);
	} else if (m->err) {
		/* The topic not existing yet is normal before kmond runs. */
		if (m->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
			fprintf(stderr, "kmon-trace: kafka: %s\n",
				rd_kafka_message_errstr(m));
	} else {
		snprintf(where, sizeof(where), "%s [%d] offset %lld",
			 rd_kafka_topic_name(m->rkt), (int)m->partition,
			 (long long)m->offset);
		ts = fn(m->payload ? m->payload : "", m->len, where, ctx);
		reader_clock__read(s->clock, 0, m->partition, ts);
	}
	rd_kafka_message_destroy(m);
	return 0;
}

uint64_t source__clock(struct source *s)
{
	return s->rk ? reader_clock__tick_consumer(s->clock, s->rk, false) :
		       mono_ns();
}

int source__poll(struct source *s, int timeout_ms, source_record_fn fn,
		 void *ctx)
{
	return s->rk ? poll_kafka(s, timeout_ms, fn, ctx) :
		       poll_file(s, timeout_ms, fn, ctx);
}
