// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "drop_frames.h"
#include "ksyms.h"

static bool tracing_frame(const struct ksyms *ks, uint64_t ip)
{
	static const char *const glue[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "trace_call_bpf",
		"perf_trace_", "__traceiter_", "bpf_dispatcher_",
	};
	const struct ksym *sym = ksyms__find(ks, ip);

	if (!sym)
		return false;
	if (sym->module && strcmp(sym->module, "bpf") == 0)
		return true;
	for (size_t i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
		if (strncmp(sym->name, glue[i], strlen(glue[i])) == 0)
			return true;
	return false;
}

size_t drop_frames_skip(const struct ksyms *ks, const uint64_t *ips,
			size_t n)
{
	size_t top = 0;

	while (top < n && tracing_frame(ks, ips[top]))
		top++;
	return top;
}

const char *const *kstack_frames(struct stack_cache *cache,
				 const struct ksyms *ks, int map_fd, int id,
				 size_t max_depth, size_t *n)
{
	uint64_t ips[max_depth];
	const char *const *frames;
	char **out, buf[KSYM_NAME_MAX + 32];
	size_t depth = 0, top;

	*n = 0;
	if (id < 0)
		return NULL;
	frames = stack_cache__get(cache, id, n);
	if (frames)
		return frames;
	memset(ips, 0, sizeof(ips));
	if (bpf_map_lookup_elem(map_fd, &id, ips))
		return NULL;
	while (depth < max_depth && ips[depth])
		depth++;
	top = drop_frames_skip(ks, ips, depth);
	depth -= top;
	out = calloc(depth ? depth : 1, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < depth; i++) {
		ksyms__format(ks, ips[top + i], buf, sizeof(buf));
		out[i] = strdup(buf);
		if (!out[i]) {
			depth = i;
			break;
		}
	}
	stack_cache__put(cache, id, out, depth);
	return stack_cache__get(cache, id, n);
}
