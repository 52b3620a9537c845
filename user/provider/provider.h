/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The Provider: which processes are which service. It owns the pid ->
 * service control map all collectors filter on, keeps it current as
 * processes come and go, and names pids (comm, service) for records. */
#ifndef KMON_PROVIDER_H
#define KMON_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>

#include "loader/probe.h"

struct bpf_object;
struct config;
struct rings;
struct provider;
struct container;
struct listener;
struct record;

extern const struct hook provider_hooks[];
extern const int provider_nhooks;

struct provider_stats {
	uint64_t lost; /* lifecycle events the ringbuf dropped */
	uint64_t pids_full; /* pids that found pid_service full */
	uint64_t processes; /* processes known now */
	uint64_t selected; /* of those, in some service */
	uint64_t pid_changes; /* pid -> service changes published */
	uint64_t listen_reads; /* of the listen list, since start */
	uint64_t listen_changes; /* listen()s and listener closes counted */
	uint64_t features_off; /* its optional hooks off, bit h for hook h */
};

/* Starts tracking processes; its ringbuf joins rs. */
int provider__new(struct rings *rs, const struct config *cfg,
		  struct provider **out);
/* Rewrites the control maps for a new config (reload). */
int provider__apply(struct provider *p, const struct config *cfg);
/* Makes obj (opened, not loaded) use the shared control maps. */
int provider__share_maps(struct provider *p, struct bpf_object *obj);
/* Who a kernel-side key names: process pid as the kernel saw it in
 * service svc (0: none). When the pid was reused within the interval, the
 * exited process is the one named if it was in svc. */
struct proc_name {
	const char *comm; /* "" when unknown */
	const char *service; /* NULL: no service */
	bool gone; /* exited: its kernel state can be dropped */
	const struct container *container; /* NULL: none */
};

void provider__name(struct provider *p, uint32_t pid, uint32_t svc,
		    struct proc_name *out);
/* Writes pid, comm and service, and the container and pod fields of a
 * containerised process (record_proc.c). */
void provider__record(struct record *r, uint32_t pid,
		      const struct proc_name *who);
/* The id the kernel knows service name by, 0 when none is configured. */
uint32_t provider__service_id(struct provider *p, const char *name);
/* comm of pid, or "" when unknown. */
const char *provider__comm(struct provider *p, uint32_t pid);
/* service name of pid, or NULL when no selector matched. */
const char *provider__service(struct provider *p, uint32_t pid);
/* Whether pid has exited (its last records may still be emitted). */
bool provider__exited(struct provider *p, uint32_t pid);
/* The listen list of every network namespace (provider/listen.h), read
 * again only when it may have changed; *out is the provider's until the
 * next call, *version changes when it was read again. Returns how many,
 * or -errno. */
int provider__listeners(struct provider *p, const struct listener **out,
			uint64_t *version);
/* A collector counts listen()s and listener closes in the kernel, in
 * every network namespace (NULL: it stopped): the listen list is read
 * only when that count moves, instead of every interval. */
void provider__count_listens(struct provider *p,
			     const volatile uint64_t *changes);
/* Calls fn(ctx, pid) for each live process in some service. */
void provider__for_each_selected(struct provider *p,
				 void (*fn)(void *ctx, uint32_t pid),
				 void *ctx);
/* fn(ctx, pid) is called when a process joins a service (at exec, or as
 * the selectors are applied) and when a process in one moves to another
 * cgroup; not for forks, whose child starts in its parent's cgroup.
 * NULL: no one is told. One watcher at a time. */
void provider__watch_selection(struct provider *p,
			       void (*fn)(void *ctx, uint32_t pid), void *ctx);
/* A process in a service started a program (exec), was forked (pid,
 * with its parent ppid) or exited, as the provider reads it from the
 * kernel: ns is when it happened (CLOCK_MONOTONIC), for the watcher to
 * tell how late it acts. */
enum proc_change { PROC_EXECED, PROC_FORKED, PROC_EXITED };

struct proc_lifecycle {
	enum proc_change what;
	uint32_t pid;
	uint32_t ppid; /* PROC_FORKED only */
	uint64_t ns;
};

/* fn(ctx, change) is called for each of those, right after the provider
 * applied it (an exec's service is the one it joined, if any). NULL: no
 * one is told. One watcher at a time. */
void provider__watch_lifecycle(struct provider *p,
			       void (*fn)(void *ctx,
					  const struct proc_lifecycle *change),
			       void *ctx);
/* After every collector emitted this interval: forget exited pids. */
void provider__end_interval(struct provider *p);
void provider__stats(struct provider *p, struct provider_stats *st);
void provider__destroy(struct provider *p); /* NULL-safe */

#endif
