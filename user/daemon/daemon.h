/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef KMON_DAEMON_H
#define KMON_DAEMON_H

#include <stddef.h>

#include "config/config.h"

/* Loads the config at path after checking who can write it. 0, or -1
 * with "file:line:col: message" in err. */
int daemon__load_config(struct config *cfg, const char *path, char *err,
			size_t errlen);
/* Runs kmond on cfg (taken over) until SIGINT/SIGTERM or, when duration_ns
 * is not 0, for that long. Returns the process exit code. */
int daemon__run(struct config *cfg, uint64_t duration_ns);
/* --watch: daemon__run also reloads when the file's content changes. */
extern bool daemon_watch_config;
/* --check: whether every enabled collector can attach. 0, or 1 when a
 * required one cannot. */
int daemon__check(const struct config *cfg);
/* --probe: the attach method of every hook on this kernel. */
void daemon__probe(void);

#endif
