/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* uprobe_multi links (Linux 6.6): one BPF link puts a program on several
 * functions of one file, for one process. libbpf 1.1 (Debian 12) and
 * the uapi headers of 6.1 do not know them, so the link is made here
 * with the bpf() call itself. Against a uprobe's perf event each: one
 * call instead of one a function; and their removal neither takes the
 * tracing events' lock (a perf uprobe opened meanwhile waited behind it,
 * 170-200 ms measured) nor waits for the grace periods once a
 * function. */
#ifndef KMON_UPROBE_MULTI_H
#define KMON_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI: the program's expected
 * attach type, set before its load */
#define KMON_TRACE_UPROBE_MULTI 48

/* prog_fd's link on the n functions at offsets (in the file at path)
 * of process pid (0: every process), on their returns when ret: its fd,
 * or -1 with errno. */
int uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offsets,
		      int n, uint32_t pid, bool ret);

#endif
