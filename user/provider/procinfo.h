/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Facts about a process read from /proc, and the pure matching the
 * provider's selectors do on them. */
#ifndef KMON_PROCINFO_H
#define KMON_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The executable's path (/proc/pid/exe). 0 or -errno. */
int procinfo__exe(uint32_t pid, char *buf, size_t len);
/* The text of /proc/pid/cgroup: "id:controllers:path" lines. */
int procinfo__cgroups(uint32_t pid, char *buf, size_t len);

/* The parent pid in a /proc/pid/stat line: "pid (comm) S ppid ...",
 * where comm may hold spaces, parentheses and any byte. 0 or -1. */
int procinfo__parse_ppid(const char *stat_line, uint32_t *ppid);
/* The comm of /proc/pid/comm text: at most 15 bytes, newline removed. */
void procinfo__parse_comm(const char *text, char comm[16]);

/* Whether any line of a /proc/pid/cgroup text has a path under prefix
 * (whole components: /a/b is under /a, /ab is not). */
bool cgroups_under(const char *text, const char *prefix);
/* The path in the unified (v2) hierarchy of a /proc/pid/cgroup text, its
 * "0::/path" line; false when there is none (a host with v1 only). */
bool procinfo__parse_cgroup2(const char *text, char *path, size_t len);
/* Whether path is prefix or under it (whole components, as above). */
bool cgroup_path_under(const char *path, const char *prefix);
/* The container id in one cgroup path, from the layouts of Docker
 * (docker-ID.scope, /docker/ID), containerd (cri-containerd-ID.scope,
 * kubepods/.../ID), CRI-O (crio-ID[.scope]) and podman (libpod-ID.scope,
 * or /libpod_parent/libpod-ID under cgroupfs).
 * Returns false when the path holds none. */
bool cgroup_container_id(const char *path, char *id, size_t len);
/* Whether some line's container id starts with id_prefix. */
bool cgroups_in_container(const char *text, const char *id_prefix);

#endif
