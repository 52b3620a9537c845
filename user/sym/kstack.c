// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/xalloc.h"
#include "sym/drop_frames.h"
#include "sym/ksyms.h"
#include "sym/kstack.h"

const char *const *kstack_frames(struct stack_cache *cache,
				 const struct ksyms *ks, int map_fd, int id,
				 size_t depth, size_t *n)
{
	const char *const *frames;
	char **out, buf[KSYM_NAME_MAX + 32];
	size_t len = 0, top;
	uint64_t *ips;

	*n = 0;
	if (id < 0)
		return NULL;
	frames = stack_cache__get(cache, id, n);
	if (frames)
		return frames;
	ips = xcalloc(depth, sizeof(*ips));
	if (bpf_map_lookup_elem(map_fd, &id, ips)) {
		free(ips);
		return NULL;
	}
	while (len < depth && ips[len])
		len++;
	top = drop_frames_skip(ks, ips, len);
	len -= top;
	out = calloc(len ? len : 1, sizeof(*out));
	for (size_t i = 0; out && i < len; i++) {
		ksyms__format(ks, ips[top + i], buf, sizeof(buf));
		out[i] = strdup(buf);
		if (!out[i]) {
			len = i;
			break;
		}
	}
	free(ips);
	if (!out)
		return NULL;
	stack_cache__put(cache, id, out, len);
	return stack_cache__get(cache, id, n);
}
