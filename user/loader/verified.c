// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "loader/prog_info.h"
#include "loader/verified.h"

void verified__log(const char *collector, struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!log_verbose) /* no bpf() calls for lines nobody sees */
		return;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;

		/* a kernel before 5.16 fills no count: nothing to say */
		if (!prog_info__get(prog, &info) || !info.verified_insns)
			continue;
		log_debug("%s: %s verified in %u instructions", collector,
			  bpf_program__name(prog), info.verified_insns);
	}
}
