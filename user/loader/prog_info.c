// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/prog_info.h"

bool prog_info__get(const struct bpf_program *prog, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_program__fd(prog);

	memset(info, 0, sizeof(*info));
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, info, &len);
}
