// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The file sink: records become lines in order, whatever their size
 * (one larger than its buffer too), are counted delivered once written,
 * and a reopen after the file was moved away starts a new file
 * (log rotation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/record.h"
#include "exporters/sink.h"
#include "unit.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

/* A record whose "pad" string has n bytes. */
static void build(struct record *r, uint64_t i, size_t n)
{
	char *pad = malloc(n + 1);

	memset(pad, 'a' + (int)(i % 26), n);
	pad[n] = '\0';
	record__begin(r, "tcp", i, "n");
	record__str(r, "pad", pad);
	record__end(r);
	free(pad);
}

int main(void)
{
	char dir[] = "/tmp/kmond-file-sink-XXXXXX", path[64], moved[80];
	struct exporter_cfg cfg = { .type = EXPORTER_FILE };
	/* around the buffer: small ones, one that fills it past the end,
	 * one larger than it, small ones after */
	const size_t b = FILE_SINK_BUFFER_BYTES;
	const size_t sizes[] = { 10, 300, b * 5 / 8, b / 2, b * 3 / 2, 5, 70 };
	const size_t n = sizeof(sizes) / sizeof(sizes[0]);
	struct strbuf want = { 0 };
	struct sink_stats st;
	struct sink *s = NULL;
	struct record r;
	char err[256], *got;
	size_t len = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/out.json", dir);
	snprintf(moved, sizeof(moved), "%s/out.json.1", dir);
	cfg.path = path;
	CHECK(file_sink_ops.open(&s, &cfg, err, sizeof(err)) == 0);
	record__init(&r);
	for (size_t i = 0; i < n; i++) {
		build(&r, i, sizes[i]);
		CHECK(file_sink_ops.send(s, &r) == 0);
		strbuf__add(&want, r.json.buf, r.json.len);
		strbuf__addc(&want, '\n');
	}
	file_sink_ops.stats(s, &st);
	CHECK(st.sent == n);
	CHECK(st.delivered + st.queued == n);
	CHECK(st.queued > 0); /* the last small ones wait for the flush */
	file_sink_ops.flush(s, 0);
	file_sink_ops.stats(s, &st);
	CHECK(st.delivered == n && st.queued == 0 && st.failed == 0);
	got = slurp(path, &len);
	CHECK(got && len == want.len && memcmp(got, want.buf, len) == 0);
	free(got);

	/* rotation: moved away, reopened, the next records go to a new file */
	CHECK(rename(path, moved) == 0);
	build(&r, 1, 3);
	file_sink_ops.send(s, &r);
	CHECK(file_sink_ops.reopen(s) == 0); /* flushes into the moved one */
	build(&r, 2, 4);
	file_sink_ops.send(s, &r);
	file_sink_ops.flush(s, 0);
	got = slurp(path, &len);
	CHECK_STR(
		got,
		"{\"kind\":\"tcp\",\"ts\":2,\"node\":\"n\",\"pad\":\"cccc\"}\n");
	free(got);
	got = slurp(moved, &len);
	CHECK(got && len > want.len && memcmp(got, want.buf, want.len) == 0);
	CHECK_STR(
		got ? got + want.len : NULL,
		"{\"kind\":\"tcp\",\"ts\":1,\"node\":\"n\",\"pad\":\"bbb\"}\n");
	free(got);
	file_sink_ops.stats(s, &st);
	CHECK(st.sent == n + 2 && st.delivered == n + 2 && st.failed == 0);

	file_sink_ops.close(s);
	record__free(&r);
	strbuf__free(&want);
	unlink(path);
	unlink(moved);
	rmdir(dir);
	return unit_done("file_sink");
}
