// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "daemon/privilege.h"

#define CAP(c) (1ULL << (c))

static int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 2; /* the upstream default */

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

/* What kmond still does after start-up, and the capability each needs:
 * - CAP_BPF, CAP_PERFMON: load and attach a collector switched on by a
 *   reload; read and update maps of tracing programs.
 * - CAP_SYS_PTRACE: /proc/<pid>/exe, fd and maps of other users'
 *   processes (exe and port selectors, user-space stacks).
 * - CAP_DAC_READ_SEARCH: read those processes' files (ELF symbols) and
 *   /proc entries whatever their mode.
 * - CAP_SYSLOG: real addresses in /proc/kallsyms (kptr_restrict).
 * - CAP_SYS_RESOURCE: RLIMIT_MEMLOCK for maps on kernels that still
 *   charge BPF memory to it (before 5.11).
 * - CAP_NET_ADMIN, only with protocol identification on at start: attach
 *   its cgroup skb programs to the cgroups of processes that join a
 *   service later (the kernel checks it at attach, not at load). A reload
 *   that turns identification on cannot get it back: new cgroups then go
 *   without capture, counted in the stats record.
 * - CAP_SYS_ADMIN, only with TLS in plaintext on at start: attach the
 *   uprobes of processes that start later (a uprobe's perf event is
 *   refused with EACCES with CAP_PERFMON alone, measured on 6.18).
 * Everything else goes, and CAP_SYS_ADMIN unless the kernel's
 * perf_event_paranoid needs it (below). */
uint64_t privilege__kept(bool cgroup_programs, bool uprobes)
{
	uint64_t keep = CAP(CAP_BPF) | CAP(CAP_PERFMON) | CAP(CAP_SYS_PTRACE) |
			CAP(CAP_DAC_READ_SEARCH) | CAP(CAP_SYSLOG) |
			CAP(CAP_SYS_RESOURCE);

	/* Debian's and Ubuntu's kernels add perf_event_paranoid 3 (their
	 * default), where every perf_event_open needs CAP_SYS_ADMIN, not
	 * CAP_PERFMON: without it a tracepoint or kprobe added by a reload
	 * cannot attach. */
	if (perf_paranoid() > 2 || uprobes)
		keep |= CAP(CAP_SYS_ADMIN);
	if (cgroup_programs)
		keep |= CAP(CAP_NET_ADMIN);
	return keep;
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int last = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = CAP_LAST_CAP;
		fclose(f);
	}
	return last;
}

int privilege__drop(bool cgroup_programs, bool uprobes)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	uint64_t keep = privilege__kept(cgroup_programs, uprobes);

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which a
	 * container started with the DaemonSet's set lacks: what its
	 * bounding set lacks already needs no drop, and what it holds beyond
	 * the kept set (NET_ADMIN with identification off) stays there,
	 * harmless: it leaves the permitted and effective sets below, and no
	 * exec can gain it back (no inheritable or ambient capabilities,
	 * no_new_privs). */
	for (int cap = 0; cap <= last_cap(); cap++)
		if (!(keep & CAP(cap)) &&
		    prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL &&
		    errno != EPERM)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t mask = (uint32_t)(keep >> (32 * i));

		data[i].effective &= mask;
		data[i].permitted &= mask;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

int privilege__check_config(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st))
		return 0; /* the config loader reports a missing file */
	if (st.st_uid != 0) {
		snprintf(err, errlen,
			 "%s:1:1: refused: owned by uid %u, not root (whoever "
			 "can write it steers a root daemon)",
			 path, (unsigned)st.st_uid);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "%s:1:1: refused: writable by %s (chmod go-w %s)",
			 path, (st.st_mode & S_IWOTH) ? "others" : "its group",
			 path);
		return -1;
	}
	return 0;
}
