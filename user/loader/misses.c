// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/misses.h"

uint64_t misses__count(struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t missed = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0) /* not loaded: another attach method's */
			continue;
		/* an error here is a kernel older than the field: 0 missed,
		 * as it counts none */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			missed += info.recursion_misses;
	}
	return missed;
}
