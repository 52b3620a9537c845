// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>

#include "sym/drop_frames.h"
#include "sym/ksyms.h"
#include "lib/array.h"

static bool tracing_frame(const struct ksyms *ks, uint64_t ip)
{
	static const char *const glue[] = {
		"bpf_prog_",	   "bpf_trace_run", "__bpf_trace_",
		"trace_call_bpf",  "perf_trace_",   "__traceiter_",
		"bpf_dispatcher_",
	};
	const struct ksym *sym = ksyms__find(ks, ip);

	if (!sym)
		return false;
	if (sym->module && strcmp(sym->module, "bpf") == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(glue); i++)
		if (strncmp(sym->name, glue[i], strlen(glue[i])) == 0)
			return true;
	return false;
}

size_t drop_frames_skip(const struct ksyms *ks, const uint64_t *ips, size_t n)
{
	size_t top = 0;

	while (top < n && tracing_frame(ks, ips[top]))
		top++;
	return top;
}
