// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The file sink: JSON lines appended to a file, or to stdout for "-".
 * Records are buffered and flushed every interval and at exit; SIGHUP
 * reopens the file so log rotation works. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "lib/log.h"
#include "exporters/sink.h"

#define FILE_BUFFER_BYTES (64 * 1024)

struct sink {
	char *path;
	FILE *f;
	char *buf; /* the stdio buffer: glibc ignores the size of its own */
	uint64_t pending; /* written into the stdio buffer, not yet flushed */
	struct sink_stats st;
};

static int file_open_stream(struct sink *s)
{
	if (strcmp(s->path, "-") == 0) {
		s->f = stdout;
		return 0;
	}
	s->f = fopen(s->path, "a");
	if (!s->f)
		return -errno;
	/* One write per 64 KiB of records, not per 4 KiB: at a record per
	 * request the syscalls were a fifth of kmond's time. */
	if (!s->buf)
		s->buf = malloc(FILE_BUFFER_BYTES);
	if (s->buf)
		setvbuf(s->f, s->buf, _IOFBF, FILE_BUFFER_BYTES);
	return 0;
}

static int file_open(struct sink **out, const struct exporter_cfg *cfg,
		     char *err, size_t errlen)
{
	struct sink *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->path = strdup(cfg->path);
	ret = file_open_stream(s);
	if (ret) {
		snprintf(err, errlen, "file sink %s: %s", cfg->path,
			 strerror(-ret));
		free(s->path);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static int file_send(struct sink *s, const struct record *r)
{
	s->st.sent++;
	if (!s->f || fwrite(r->json.buf, 1, r->json.len, s->f) != r->json.len ||
	    fputc('\n', s->f) == EOF) {
		s->st.failed++;
		return -EIO;
	}
	s->pending++;
	return 0;
}

static void file_flush(struct sink *s, int timeout_ms)
{
	(void)timeout_ms;
	if (!s->f)
		return;
	if (fflush(s->f) == 0) {
		s->st.delivered += s->pending;
	} else {
		log_warn("file sink %s: %s", s->path, strerror(errno));
		s->st.failed += s->pending;
		clearerr(s->f);
	}
	s->pending = 0;
}

static void file_close_stream(struct sink *s)
{
	file_flush(s, 0);
	if (s->f && s->f != stdout)
		fclose(s->f);
	s->f = NULL;
}

static int file_reopen(struct sink *s)
{
	if (strcmp(s->path, "-") == 0)
		return 0;
	file_close_stream(s);
	return file_open_stream(s);
}

static void file_stats(struct sink *s, struct sink_stats *st)
{
	*st = s->st;
	st->queued = s->pending;
}

static void file_close(struct sink *s)
{
	if (!s)
		return;
	file_close_stream(s);
	free(s->buf);
	free(s->path);
	free(s);
}

const struct sink_ops file_sink_ops = {
	.type = "file",
	.open = file_open,
	.send = file_send,
	.flush = file_flush,
	.reopen = file_reopen,
	.stats = file_stats,
	.close = file_close,
};
