/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The pid -> service control map every collector filters on (event ABI,
 * shared by BPF and user space: fixed-width types and #defines only). */
#ifndef KMON_FILTER_H
#define KMON_FILTER_H

#define KMON_MAX_PIDS 32768
#define KMON_MAX_COMMS 1024
#define KMON_COMM_LEN 16

/* The selection survives exec: the service is a property of the process
 * tree (pid selectors), not of the binary (comm selectors). */
#define KMON_SVC_STICKY 1

struct kmon_svc {
	__u32 id; /* service id, >= 1 */
	__u32 flags;
};

struct kmon_ctl {
	/* 1: every process is monitored, selected or not (no services in
	 * the config); 0: only pids in pid_service. */
	__u32 all_processes;
	/* Bumped at each reload, once pid_service holds the new config:
	 * state kept from before (a connection's service) is checked again. */
	__u32 gen;
};

#endif
