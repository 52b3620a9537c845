// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/libbpf.h>

#include "loader/misses.h"
#include "loader/prog_info.h"

uint64_t misses__count(struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t missed = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;

		/* a kernel older than the field leaves it 0: it counts
		 * none */
		if (prog_info__get(prog, &info))
			missed += info.recursion_misses;
	}
	return missed;
}
