// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes as a record for the prometheus exporter.
 * The first byte picks the kind, the rest is the record; ingest must
 * refuse or take it without a fault, and the rendered text must be
 * lines of the exposition format (comments or name{labels} value). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "exporters/prom_metrics.h"
#include "exporters/prom_series.h"

static const char *const kinds[] = {
	"syscall", "drop",     "bio",	   "bio_hist", "offcpu",
	"counter", "topology", "tcp_hist", "stats",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct prom_table *t;
	static struct strbuf out;
	static uint64_t now;

	if (!size)
		return 0;
	if (!t)
		t = prom_table__new(1000, 2000);
	now += 10;
	prom_metrics__ingest(t, kinds[data[0] % 9], (const char *)data + 1,
			     size - 1, now);
	prom_table__expire(t, now);
	strbuf__reset(&out);
	prom_table__render(t, &out);
	for (char *line = out.buf; line && *line;) {
		char *nl = strchr(line, '\n');

		if (!nl || (line[0] != '#' && strncmp(line, "kmon_", 5) != 0))
			abort();
		/* a label value's newline is escaped: one line per sample */
		if (line[0] != '#' && !memchr(line, ' ', nl - line))
			abort();
		line = nl + 1;
	}
	return 0;
}
