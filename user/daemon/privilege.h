/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Least privilege: once its programs are loaded and attached, kmond keeps
 * only the capabilities its later work needs. */
#ifndef KMON_PRIVILEGE_H
#define KMON_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The capabilities kmond keeps, as a CapEff-style bit mask.
 * cgroup_programs: it attaches programs to cgroups as processes come
 * (protocol identification's capture), which needs CAP_NET_ADMIN.
 * uprobes: it attaches uprobes as processes come (TLS in plaintext),
 * which needs CAP_SYS_ADMIN. */
uint64_t privilege__kept(bool cgroup_programs, bool uprobes);
/* Drops every other capability (effective, permitted, inheritable,
 * ambient and bounding set) and sets no_new_privs. 0 or -errno. */
int privilege__drop(bool cgroup_programs, bool uprobes);
/* Refuses a config that is not owned by root or is writable by group or
 * others: whoever can write it steers a root daemon. 0, or -1 with a
 * message in err. */
int privilege__check_config(const char *path, char *err, size_t errlen);

#endif
