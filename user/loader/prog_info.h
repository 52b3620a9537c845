/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the kernel says of a loaded program (struct bpf_prog_info). */
#ifndef KMON_PROG_INFO_H
#define KMON_PROG_INFO_H

#include <stdbool.h>
#include <linux/bpf.h>

struct bpf_program;

/* Fills info for prog; false when prog is not loaded (another attach
 * method's) or the kernel would not say. Fields newer than the kernel
 * stay 0. */
bool prog_info__get(const struct bpf_program *prog, struct bpf_prog_info *info);

#endif
