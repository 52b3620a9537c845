// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The file sink: JSON lines appended to a file, or to stdout for "-".
 * Records are gathered in a buffer, written when it is full and at every
 * flush (every interval, and at exit); SIGHUP reopens the file so log
 * rotation works. Its own buffer, not stdio's: a record is one copy and a
 * newline (fwrite and fputc cost as much as the copy, per request). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "exporters/sink.h"

struct sink {
	char *path;
	int fd; /* -1 when the file could not be reopened */
	char *buf;
	size_t len;
	uint64_t buffered; /* records in buf */
	struct sink_stats st;
};

static bool is_stdout(const struct sink *s)
{
	return strcmp(s->path, "-") == 0;
}

static int file_open_fd(struct sink *s)
{
	if (is_stdout(s)) {
		s->fd = STDOUT_FILENO;
		return 0;
	}
	s->fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	return s->fd < 0 ? -errno : 0;
}

/* All of iov, through partial writes and signals. */
static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Writes the buffer and, when given, one record too large for it (and
 * its newline); every record in them is delivered, or failed. */
static void file_write_out(struct sink *s, const struct record *big)
{
	struct iovec iov[3] = { { s->buf, s->len } };
	uint64_t records = s->buffered;
	int n = 1, err = -EBADF;

	if (big) {
		iov[n++] = (struct iovec){ big->json.buf, big->json.len };
		iov[n++] = (struct iovec){ "\n", 1 };
		records++;
	}
	if (!records)
		return;
	if (s->fd >= 0)
		err = write_all(s->fd, iov, n);
	if (err) {
		log_warn("file sink %s: %s", s->path, strerror(-err));
		s->st.failed += records;
	} else {
		s->st.delivered += records;
	}
	s->len = 0;
	s->buffered = 0;
}

static int file_open(struct sink **out, const struct exporter_cfg *cfg,
		     char *err, size_t errlen)
{
	struct sink *s = xcalloc(1, sizeof(*s));
	int ret;

	s->path = xstrdup(cfg->path);
	ret = file_open_fd(s);
	if (ret) {
		snprintf(err, errlen, "file sink %s: %s", cfg->path,
			 strerror(-ret));
		free(s->path);
		free(s);
		return ret;
	}
	s->buf = xmalloc(FILE_SINK_BUFFER_BYTES);
	*out = s;
	return 0;
}

static int file_send(struct sink *s, const struct record *r)
{
	size_t len = r->json.len;

	s->st.sent++;
	if (s->fd < 0) { /* its reopen failed */
		s->st.failed++;
		return -EIO;
	}
	if (s->len + len + 1 > FILE_SINK_BUFFER_BYTES)
		file_write_out(s, len + 1 > FILE_SINK_BUFFER_BYTES ? r : NULL);
	if (len + 1 > FILE_SINK_BUFFER_BYTES)
		return 0; /* written (or counted failed) with the buffer */
	memcpy(s->buf + s->len, r->json.buf, len);
	s->buf[s->len + len] = '\n';
	s->len += len + 1;
	s->buffered++;
	return 0;
}

static void file_flush(struct sink *s, int timeout_ms)
{
	(void)timeout_ms;
	file_write_out(s, NULL);
}

static void file_close_fd(struct sink *s)
{
	file_write_out(s, NULL);
	if (s->fd >= 0 && !is_stdout(s))
		close(s->fd);
	s->fd = -1;
}

static int file_reopen(struct sink *s)
{
	if (is_stdout(s))
		return 0;
	file_close_fd(s);
	return file_open_fd(s);
}

static void file_stats(struct sink *s, struct sink_stats *st)
{
	*st = s->st;
	st->queued = s->buffered;
}

static void file_close(struct sink *s)
{
	if (!s)
		return;
	file_close_fd(s);
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
