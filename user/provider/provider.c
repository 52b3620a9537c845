// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Provider. The kernel half (bpf/provider.bpf.c) applies comm
 * selectors at exec and inheritance at fork, so a process is monitored
 * from its first instruction; this half scans /proc once at start-up,
 * applies pid selectors, mirrors lifecycle events into a pid table for
 * naming, and rewrites the control maps on reload. */
#include <linux/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "config/config.h"
#include "lib/array.h"
#include "lib/hashmap.h"
#include "loader/rings.h"
#include "loader/verified.h"
#include "lib/xalloc.h"
#include "provider/container.h"
#include "provider/listen.h"
#include "lib/log.h"
#include "lib/maps.h"
#include "bpf/proc_events.h"
#include "provider/procinfo.h"
#include "provider.skel.h"
#include "provider/provider.h"

#define MAX_ANCESTRY 64 /* how far up the tree a pid selector reaches */
/* Containers known past this are swept of those no process is in. */
#define CONTAINERS_SWEEP_AT 256

struct proc {
	char comm[KMON_COMM_LEN];
	uint32_t ppid;
	uint32_t service; /* 0: none */
	bool exited;
	bool kept; /* exited, and kept through one interval end already */
	const struct container *ctr; /* NULL: none (owned by containers) */
};

struct provider {
	struct provider_bpf *skel;
	struct hashmap *procs; /* pid -> struct proc * */
	/* pid -> struct proc * of a process that exited this interval and
	 * whose pid a new process took meanwhile */
	struct hashmap *graves;
	const struct config *cfg; /* the config applied last */
	/* service id -> name; ids are 1-based positions of first names */
	char (*names)[CONFIG_NAME_MAX];
	int nnames;
	/* pids named by pid selectors whose process has exited: a new
	 * process given the same pid is not the one the config meant. */
	struct hashmap *spent_pids;
	/* some selector needs /proc (exe, cgroup, container, pid, port) */
	bool resolve_in_user_space;
	/* port selectors: (pid << 16 | port) of each process holding a
	 * listening socket on a selected port */
	struct hashmap *port_pids;
	bool port_selectors;
	/* sum of the hashes of the selected listeners' inodes when the fds
	 * were last scanned: a new one rescans */
	uint64_t listeners_sum;
	bool ports_stale; /* rescan whatever the sum */
	struct listen_cache listen;
	uint64_t ports_version; /* of the listen list the ports came from */
	__u32 config_gen; /* kmon_ctl.gen */
	/* pid_service_gen, mapped: bumped after each change of pid_service
	 * made here (the BPF half bumps it for its own) */
	uint64_t *pid_service_gen;
	uint64_t pid_changes;
	struct containers *containers; /* container and pod of each process */
	void (*on_select)(void *ctx, uint32_t pid); /* the watcher, or NULL */
	void *on_select_ctx;
	/* the watcher of execs, forks and exits, or NULL */
	void (*on_change)(void *ctx, const struct proc_lifecycle *change);
	void *on_change_ctx;
	uint64_t features_off; /* probe__features_off of provider_hooks */
};

/* one hook a paragraph, a candidate a line (clang-format 14 would
 * fold them) */
/* clang-format off */
const struct hook provider_hooks[] = {
	{ "fork",
	  { { ATTACH_TP_BTF, "fork_btf", "sched_process_fork" },
	    { ATTACH_RAW_TP, "fork_raw", "sched_process_fork" } },
	  2 },
	{ "exec",
	  { { ATTACH_TP_BTF, "exec_btf", "sched_process_exec" },
	    { ATTACH_RAW_TP, "exec_raw", "sched_process_exec" } },
	  2 },
	{ "exit",
	  { { ATTACH_TP_BTF, "exit_btf", "sched_process_exit" },
	    { ATTACH_RAW_TP, "exit_raw", "sched_process_exit" } },
	  2 },
	{ "cgroup",
	  { { ATTACH_TP_BTF, "cgroup_btf", "cgroup_attach_task" },
	    { ATTACH_RAW_TP, "cgroup_raw", "cgroup_attach_task" } },
	  2,
	  .optional = true,
	  .feature = "a process moved into a selected cgroup is not seen "
		     "moving" },
};
/* clang-format on */
const int provider_nhooks = ARRAY_SIZE(provider_hooks);

static struct proc *provider__proc(struct provider *p, uint32_t pid)
{
	uint64_t *v = hashmap__find(p->procs, pid);

	return v ? (struct proc *)(uintptr_t)*v : NULL;
}

/* Exited processes are kept per (pid, service): a pid reused twice in one
 * interval (by processes of other services) must not evict the one a
 * kernel key still names. */
static uint64_t grave_key(uint32_t pid, uint32_t svc)
{
	return (uint64_t)svc << 32 | pid;
}

static struct proc *provider__grave(struct provider *p, uint32_t pid,
				    uint32_t svc)
{
	uint64_t *v = hashmap__find(p->graves, grave_key(pid, svc));

	return v ? (struct proc *)(uintptr_t)*v : NULL;
}

static struct proc *provider__proc_add(struct provider *p, uint32_t pid)
{
	struct proc *proc = provider__proc(p, pid);

	/* A pid seen again after its exit is a new process; the old one
	 * keeps its name until this interval's records are out. */
	if (proc && proc->exited) {
		free(provider__grave(p, pid, proc->service));
		hashmap__set(p->graves, grave_key(pid, proc->service),
			     (uintptr_t)proc);
		proc = NULL;
	}
	if (!proc) {
		proc = xcalloc(1, sizeof(*proc));
		hashmap__set(p->procs, pid, (uintptr_t)proc);
	}
	memset(proc, 0, sizeof(*proc));
	return proc;
}

static void provider__proc_drop(struct provider *p, uint32_t pid)
{
	free(provider__proc(p, pid));
	hashmap__delete(p->procs, pid);
}

/* --- selectors --- */

/* Service ids are indexes + 1 into the table of every service name ever
 * configured, so several selectors can make up one service, and an id
 * still in kernel state after a reload (open connections, counters, I/O
 * in flight) keeps naming the service it was counted for. */
static uint32_t name_id(struct provider *p, const char *name)
{
	for (int i = 0; i < p->nnames; i++)
		if (strcmp(p->names[i], name) == 0)
			return i + 1;
	return 0;
}

static uint32_t service_id(struct provider *p, const struct config *cfg,
			   int entry)
{
	return name_id(p, cfg->services[entry].name);
}

/* The id of a name a pod label gave, added to the table when new. */
static uint32_t label_name_id(struct provider *p, const char *name)
{
	uint32_t id = name_id(p, name);

	if (id)
		return id;
	p->names = xrealloc(p->names, (p->nnames + 1) * sizeof(*p->names));
	snprintf(p->names[p->nnames++], CONFIG_NAME_MAX, "%s", name);
	return p->nnames;
}

/* Label values are names ([A-Za-z0-9._-], 63 bytes); anything else in
 * one is not taken as a service name. */
static bool label_value_ok(const char *v)
{
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("_.-", *v))
			return false;
	return true;
}

/* The service entry names: its name, or its pod's label when it says so
 * and the pod has one that makes a service name. */
static uint32_t entry_service_id(struct provider *p, const struct config *cfg,
				 int entry, const struct proc *proc)
{
	const struct service_cfg *s = &cfg->services[entry];
	char value[CONFIG_NAME_MAX];

	if (s->name_label[0] &&
	    container__label(proc->ctr, s->name_label, value, sizeof(value)) &&
	    label_value_ok(value))
		return label_name_id(p, value);
	return service_id(p, cfg, entry);
}

static bool is_ancestor_or_self(struct provider *p, uint32_t pid,
				uint32_t ancestor)
{
	for (int depth = 0; pid && depth < MAX_ANCESTRY; depth++) {
		struct proc *proc;

		if (pid == ancestor)
			return true;
		proc = provider__proc(p, pid);
		if (!proc)
			return false;
		pid = proc->ppid;
	}
	return false;
}

/* Whether pid or a process up its tree holds a listener on port. A
 * child forked while kmond runs inherits its parent's service in the
 * kernel; one forked before kmond started (a PostgreSQL backend serving
 * a connection older than kmond: it closed the postmaster's listener)
 * is selected the same way here, and stays selected when the listen list
 * changes. */
static bool listens_or_descends(struct provider *p, uint32_t pid, uint16_t port)
{
	for (int depth = 0; pid && depth < MAX_ANCESTRY; depth++) {
		struct proc *proc;

		if (hashmap__find(p->port_pids, (uint64_t)pid << 16 | port))
			return true;
		proc = provider__proc(p, pid);
		if (!proc)
			return false;
		pid = proc->ppid;
	}
	return false;
}

/* What /proc says of one process, read only when a selector asks. */
struct facts {
	uint32_t pid;
	int exe_err, cgroups_err; /* 1: not read yet */
	char exe[4096];
	char cgroups[4096];
};

static const char *facts__exe(struct facts *f)
{
	if (f->exe_err == 1)
		f->exe_err = procinfo__exe(f->pid, f->exe, sizeof(f->exe));
	return f->exe_err ? NULL : f->exe;
}

static const char *facts__cgroups(struct facts *f)
{
	if (f->cgroups_err == 1)
		f->cgroups_err = procinfo__cgroups(f->pid, f->cgroups,
						   sizeof(f->cgroups));
	return f->cgroups_err ? NULL : f->cgroups;
}

static bool selector_matches(struct provider *p, const struct service_cfg *s,
			     uint32_t pid, const struct proc *proc,
			     struct facts *f)
{
	const char *text;

	switch (s->type) {
	case SELECTOR_COMM:
		return strcmp(s->comm, proc->comm) == 0;
	case SELECTOR_PID:
		return !hashmap__find(p->spent_pids, s->pid) &&
		       is_ancestor_or_self(p, pid, s->pid);
	case SELECTOR_EXE:
		text = facts__exe(f);
		return text && fnmatch(s->path, text, 0) == 0;
	case SELECTOR_CGROUP:
		text = facts__cgroups(f);
		return text && cgroups_under(text, s->path);
	case SELECTOR_CONTAINER:
		text = facts__cgroups(f);
		return text && cgroups_in_container(text, s->path);
	case SELECTOR_PORT:
		return listens_or_descends(p, pid, s->port);
	case SELECTOR_K8S:
		return container__k8s_matches(proc->ctr, s->k8s_ns, s->path);
	}
	return false;
}

/* The first selector matching pid decides its service. Selections by
 * binary (comm, exe) end at the next exec; the others are sticky: they
 * are properties of the process tree. */
static struct kmon_svc resolve(struct provider *p, uint32_t pid,
			       const struct proc *proc)
{
	const struct config *cfg = p->cfg;
	struct facts f = { .pid = pid, .exe_err = 1, .cgroups_err = 1 };

	for (int i = 0; i < cfg->nservices; i++) {
		const struct service_cfg *s = &cfg->services[i];
		bool by_binary = s->type == SELECTOR_COMM ||
				 s->type == SELECTOR_EXE;

		if (selector_matches(p, s, pid, proc, &f))
			return (struct kmon_svc){
				entry_service_id(p, cfg, i, proc),
				by_binary ? 0 : KMON_SVC_STICKY,
			};
	}
	return (struct kmon_svc){ 0, 0 };
}

/* What BPF programs keep per process from pid_service is stale. */
static void pid_service_changed(struct provider *p)
{
	if (p->pid_service_gen)
		__atomic_fetch_add(p->pid_service_gen, 1, __ATOMIC_SEQ_CST);
}

/* Tells the watcher that pid, in a service now, may be somewhere new. */
static void selected(struct provider *p, uint32_t pid, struct proc *proc)
{
	if (p->on_select && proc->service && !proc->exited)
		p->on_select(p->on_select_ctx, pid);
}

/* Tells the lifecycle watcher what e did to a process in a service
 * (an exit: the process was in one). */
static void changed(struct provider *p, const struct kmon_proc_event *e,
		    const struct proc *proc)
{
	static const enum proc_change what[] = {
		[KMON_PROC_FORK] = PROC_FORKED,
		[KMON_PROC_EXEC] = PROC_EXECED,
		[KMON_PROC_EXIT] = PROC_EXITED,
	};
	struct proc_lifecycle change = {
		.what = what[e->type],
		.pid = e->pid,
		.ppid = e->ppid,
		.ns = e->ns,
	};

	if (p->on_change && proc && proc->service)
		p->on_change(p->on_change_ctx, &change);
}

static void publish(struct provider *p, uint32_t pid, struct proc *proc,
		    struct kmon_svc svc)
{
	bool joined = svc.id && proc->service != svc.id;

	int fd = bpf_map__fd(p->skel->maps.pid_service);
	struct kmon_svc now;
	bool present = bpf_map_lookup_elem(fd, &pid, &now) == 0;

	if (svc.id &&
	    (!present || now.id != svc.id || now.flags != svc.flags)) {
		bpf_map_update_elem(fd, &pid, &svc, BPF_ANY);
		pid_service_changed(p);
	} else if (!svc.id && present) {
		bpf_map_delete_elem(fd, &pid);
		pid_service_changed(p);
	}
	if (proc->service != svc.id) {
		log_debug("pid %u (%s): service %s -> %s", pid, proc->comm,
			  proc->service ? p->names[proc->service - 1] : "none",
			  svc.id ? p->names[svc.id - 1] : "none");
		p->pid_changes++;
	}
	proc->service = svc.id;
	if (joined)
		selected(p, pid, proc);
}

static void provider__set_names(struct provider *p, const struct config *cfg)
{
	for (int i = 0; i < cfg->nservices; i++) {
		if (name_id(p, cfg->services[i].name))
			continue;
		p->names =
			xrealloc(p->names, (p->nnames + 1) * sizeof(*p->names));
		memcpy(p->names[p->nnames++], cfg->services[i].name,
		       CONFIG_NAME_MAX);
	}
}

static void provider__write_comms(struct provider *p, const struct config *cfg)
{
	int fd = bpf_map__fd(p->skel->maps.comm_service);
	char key[KMON_COMM_LEN], next[KMON_COMM_LEN];
	bool more;

	/* Delete what the new config no longer names, then (re)insert. */
	more = bpf_map_get_next_key(fd, NULL, next) == 0;
	while (more) {
		bool keep = false;

		memcpy(key, next, sizeof(key));
		more = bpf_map_get_next_key(fd, key, next) == 0;
		for (int i = 0; i < cfg->nservices; i++)
			if (cfg->services[i].type == SELECTOR_COMM &&
			    strncmp(cfg->services[i].comm, key, sizeof(key)) ==
				    0)
				keep = true;
		if (!keep)
			bpf_map_delete_elem(fd, key);
	}
	for (int i = cfg->nservices - 1; i >= 0; i--) {
		__u32 id = service_id(p, cfg, i);

		if (cfg->services[i].type != SELECTOR_COMM)
			continue;
		memset(key, 0, sizeof(key));
		memcpy(key, cfg->services[i].comm,
		       strlen(cfg->services[i].comm));
		/* Reverse order: the first entry naming a comm wins. */
		bpf_map_update_elem(fd, key, &id, BPF_ANY);
	}
}

/* A spent pid stays spent while the config names it. */
static void provider__forget_spent(struct provider *p, const struct config *cfg)
{
	uint64_t pid, *gone;
	size_t pos = 0, n = 0;

	gone = xcalloc(hashmap__count(p->spent_pids) + 1, sizeof(*gone));
	while (hashmap__next(p->spent_pids, &pos, &pid, NULL)) {
		bool named = false;

		for (int i = 0; i < cfg->nservices; i++)
			if (cfg->services[i].type == SELECTOR_PID &&
			    cfg->services[i].pid == pid)
				named = true;
		if (!named)
			gone[n++] = pid;
	}
	for (size_t i = 0; i < n; i++)
		hashmap__delete(p->spent_pids, gone[i]);
	free(gone);
}

static void provider__note_exit(struct provider *p, uint32_t pid)
{
	for (int i = 0; i < p->cfg->nservices; i++)
		if (p->cfg->services[i].type == SELECTOR_PID &&
		    p->cfg->services[i].pid == pid)
			hashmap__set(p->spent_pids, pid, 1);
}

/* --- port selectors --- */

static bool port_selected(const struct config *cfg, uint16_t port)
{
	for (int i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].type == SELECTOR_PORT &&
		    cfg->services[i].port == port)
			return true;
	return false;
}

struct port_scan {
	struct provider *p;
	struct hashmap *inodes; /* selected listeners': inode -> port */
};

/* A process holding a socket: one of a selected listener's holders? */
static void note_port_owner(void *ctx, uint64_t inode, uint32_t pid)
{
	struct port_scan *scan = ctx;
	uint64_t *port = hashmap__find(scan->inodes, inode);

	if (port)
		hashmap__set(scan->p->port_pids, (uint64_t)pid << 16 | *port,
			     1);
}

/* Keeps port selectors current as listeners come and go. Reading the
 * listen list is cheap; the fds are walked only when it changed. Returns
 * whether they were (the caller re-resolves every process). */
static bool provider__read_ports(struct provider *p)
{
	const struct listener *ls;
	struct hashmap *inodes;
	uint64_t sum = 0, version;
	int n;

	if (!p->port_selectors)
		return false;
	n = listen_cache__get(&p->listen, &ls, &version);
	if (n < 0 || (version == p->ports_version && !p->ports_stale))
		return false;
	p->ports_version = version;
	inodes = hashmap__new();
	for (int i = 0; i < n; i++) {
		if (!port_selected(p->cfg, ls[i].port))
			continue;
		hashmap__set(inodes, ls[i].inode, ls[i].port);
		sum += (ls[i].inode * 0x9e3779b97f4a7c15ULL) ^ ls[i].port;
	}
	if (sum == p->listeners_sum && !p->ports_stale) {
		hashmap__free(inodes);
		return false;
	}
	p->listeners_sum = sum;
	p->ports_stale = false;
	hashmap__free(p->port_pids);
	p->port_pids = hashmap__new();
	listen__socket_holders(note_port_owner,
			       &(struct port_scan){ p, inodes });
	hashmap__free(inodes);
	return true;
}

static void provider__resolve_all(struct provider *p)
{
	uint64_t pid, value;
	size_t pos = 0;

	while (hashmap__next(p->procs, &pos, &pid, &value)) {
		struct proc *proc = (struct proc *)(uintptr_t)value;

		if (!proc->exited)
			publish(p, pid, proc, resolve(p, pid, proc));
	}
}

int provider__apply(struct provider *p, const struct config *cfg)
{
	struct kmon_ctl ctl = { .all_processes = cfg->nservices == 0,
				.gen = p->config_gen };
	int ctl_fd = bpf_map__fd(p->skel->maps.kmon_ctl);
	__u32 zero = 0;
	int err;

	p->cfg = cfg;
	p->resolve_in_user_space = false;
	p->port_selectors = false;
	for (int i = 0; i < cfg->nservices; i++) {
		if (cfg->services[i].type != SELECTOR_COMM)
			p->resolve_in_user_space = true;
		if (cfg->services[i].type == SELECTOR_PORT)
			p->port_selectors = true;
	}
	/* The ports the new config names are looked up now. */
	p->ports_stale = true;
	provider__forget_spent(p, cfg);
	provider__set_names(p, cfg);
	provider__write_comms(p, cfg);
	provider__read_ports(p);
	provider__resolve_all(p);
	/* all_processes under the old gen, then what programs kept of
	 * pid_service and kmon_ctl is stale (kmon_tgid_seen's answers
	 * too), and only then the new gen: a program that sees it (to look
	 * at a connection's process again) finds no answer from before. */
	err = bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
	pid_service_changed(p);
	ctl.gen = ++p->config_gen;
	return err ?: bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
}

/* A process's container is read when it may have changed: at start-up,
 * exec and cgroup moves; a fork inherits it. One that has gone keeps
 * what was known. */
static void provider__read_container(struct provider *p, uint32_t pid,
				     struct proc *proc)
{
	bool readable;
	const struct container *c =
		containers__of_pid(p->containers, pid, &readable);

	if (readable)
		proc->ctr = c;
}

/* --- /proc at start-up --- */

static int read_proc_line(uint32_t pid, const char *file, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int read_ppid(uint32_t pid, uint32_t *ppid)
{
	char line[1024];

	if (read_proc_line(pid, "stat", line, sizeof(line)))
		return -1;
	return procinfo__parse_ppid(line, ppid);
}

static void provider__scan(struct provider *p)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	if (!dir) {
		log_warn("cannot read /proc: %s", strerror(errno));
		return;
	}
	while ((de = readdir(dir))) {
		char *end, comm[64];
		unsigned long pid = strtoul(de->d_name, &end, 10);
		uint32_t ppid;
		struct proc *proc;

		if (*end || pid == 0 || pid > UINT32_MAX)
			continue;
		if (read_proc_line(pid, "comm", comm, sizeof(comm)) ||
		    read_ppid(pid, &ppid))
			continue; /* exited meanwhile */
		/* An exec event may have raced ahead of the scan. */
		if (provider__proc(p, pid))
			continue;
		proc = provider__proc_add(p, pid);
		procinfo__parse_comm(comm, proc->comm);
		proc->ppid = ppid;
		provider__read_container(p, pid, proc);
	}
	closedir(dir);
}

/* --- lifecycle events --- */

static int provider__on_event(void *ctx, void *data, size_t size)
{
	struct provider *p = ctx;
	const struct kmon_proc_event *e = data;
	struct proc *proc, *parent;
	uint32_t before;
	bool joined;

	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case KMON_PROC_FORK:
		proc = provider__proc_add(p, e->pid);
		proc->ppid = e->ppid;
		parent = provider__proc(p, e->ppid);
		proc->ctr = parent ? parent->ctr : NULL;
		break;
	case KMON_PROC_EXEC:
		proc = provider__proc(p, e->pid);
		if (!proc)
			proc = provider__proc_add(p, e->pid);
		provider__read_container(p, e->pid, proc);
		break;
	case KMON_PROC_EXIT:
		proc = provider__proc(p, e->pid);
		if (proc)
			proc->exited = true;
		provider__note_exit(p, e->pid);
		changed(p, e, proc);
		return 0;
	case KMON_PROC_CGROUP:
		proc = provider__proc(p, e->pid);
		if (!proc || proc->exited)
			return 0;
		provider__read_container(p, e->pid, proc);
		before = proc->service;
		/* The event's comm is the mover's, not the process's. */
		if (p->resolve_in_user_space)
			publish(p, e->pid, proc, resolve(p, e->pid, proc));
		if (proc->service == before) /* else publish told of the join */
			selected(p, e->pid, proc);
		return 0;
	default:
		return 0;
	}
	memcpy(proc->comm, e->comm, sizeof(proc->comm));
	proc->comm[sizeof(proc->comm) - 1] = '\0';
	/* a fork's child starts in its parent's cgroup: not a join */
	joined = e->type == KMON_PROC_EXEC && e->service &&
		 proc->service != e->service;
	if (proc->service != e->service) {
		log_debug("pid %u (%s): service %s", e->pid, proc->comm,
			  e->service ? p->names[e->service - 1] : "none");
		p->pid_changes++;
	}
	proc->service = e->service;
	/* The kernel applied comm selectors and inheritance; the others
	 * need /proc, read here right after exec. */
	if (e->type == KMON_PROC_EXEC && p->resolve_in_user_space)
		publish(p, e->pid, proc, resolve(p, e->pid, proc));
	if (joined) /* by the kernel's selectors */
		selected(p, e->pid, proc);
	changed(p, e, proc);
	return 0;
}

/* --- lifecycle of the provider itself --- */

/* Opens and loads the provider's object once. */
static int provider_load_once(struct provider *p)
{
	int chosen[ARRAY_SIZE(provider_hooks)];
	int err;

	p->skel = provider_bpf__open();
	if (!p->skel) {
		err = -errno;
		log_error("failed to open the provider's BPF object: %s",
			  strerror(-err));
		return err;
	}
	err = probe__select("provider", p->skel->obj, provider_hooks,
			    provider_nhooks, chosen);
	if (err) {
		log_error("the provider cannot track processes on this kernel");
		return err;
	}
	err = provider_bpf__load(p->skel);
	if (err)
		log_debug("failed to load the provider: %s", strerror(-err));
	else
		verified__log("provider", p->skel->obj);
	return err;
}

/* A chosen method the kernel refuses at load gives way to the next one,
 * as in the collectors (daemon.c); libbpf's lines are shown only when
 * nothing loads. */
static int load_once(void *p)
{
	return provider_load_once(p);
}

static void load_undo(void *ctx)
{
	struct provider *p = ctx;

	provider_bpf__destroy(p->skel);
	p->skel = NULL;
}

static int provider_load(struct provider *p)
{
	int err = probe__start("provider", provider_hooks, provider_nhooks,
			       load_once, load_undo, p);

	if (err)
		log_error("failed to load the provider: %s", strerror(-err));
	else
		p->features_off =
			probe__features_off(provider_hooks, provider_nhooks);
	return err;
}

int provider__new(struct rings *rs, const struct config *cfg,
		  struct provider **out)
{
	struct provider *p = xcalloc(1, sizeof(*p));
	int err;

	p->procs = hashmap__new();
	p->graves = hashmap__new();
	p->spent_pids = hashmap__new();
	p->port_pids = hashmap__new();
	p->containers = containers__new(NULL);
	err = provider_load(p);
	if (err)
		goto cleanup;
	p->pid_service_gen =
		mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(p->skel->maps.pid_service_gen), 0);
	if (p->pid_service_gen == MAP_FAILED) {
		err = -errno;
		p->pid_service_gen = NULL;
		log_error("failed to map pid_service_gen: %s", strerror(-err));
		goto cleanup;
	}
	/* Attach before scanning /proc, so no process falls between. */
	err = provider_bpf__attach(p->skel);
	if (err) {
		log_error("failed to attach the provider: %s", strerror(-err));
		goto cleanup;
	}
	err = rings__add(rs, bpf_map__fd(p->skel->maps.proc_events),
			 provider__on_event, p);
	if (err)
		goto cleanup;
	provider__scan(p);
	err = provider__apply(p, cfg);
	if (err) {
		log_error("failed to write the provider's control maps: %s",
			  strerror(-err));
		goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	provider__destroy(p);
	return err;
}

int provider__share_maps(struct provider *p, struct bpf_object *obj)
{
	static const char *const shared[] = { "pid_service", "kmon_ctl",
					      "pid_service_gen",
					      "kmon_tgid_seen" };
	struct bpf_map *own, *map;
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(shared); i++) {
		own = bpf_object__find_map_by_name(p->skel->obj, shared[i]);
		map = bpf_object__find_map_by_name(obj, shared[i]);
		if (!map)
			continue;
		err = bpf_map__reuse_fd(map, bpf_map__fd(own));
		if (err) {
			log_error("failed to share map %s: %s", shared[i],
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

static const char *provider__service_name(struct provider *p, uint32_t svc)
{
	return svc && (int)svc <= p->nnames ? p->names[svc - 1] : NULL;
}

void provider__name(struct provider *p, uint32_t pid, uint32_t svc,
		    struct proc_name *out)
{
	struct proc *proc = provider__proc(p, pid);
	/* The live process, when it has that service: the common case
	 * (a record per request) needs no look at the graves. */
	struct proc *grave = proc && proc->service == svc ?
				     NULL :
				     provider__grave(p, pid, svc);

	if (grave)
		proc = grave;
	out->comm = proc ? proc->comm : "";
	out->service = provider__service_name(p, svc);
	out->container = proc ? proc->ctr : NULL;
	out->gone = !proc || proc->exited || proc == grave;
}

uint32_t provider__service_id(struct provider *p, const char *name)
{
	return name_id(p, name);
}

const char *provider__comm(struct provider *p, uint32_t pid)
{
	struct proc *proc = provider__proc(p, pid);

	return proc ? proc->comm : "";
}

const char *provider__service(struct provider *p, uint32_t pid)
{
	struct proc *proc = provider__proc(p, pid);

	return proc ? provider__service_name(p, proc->service) : NULL;
}

bool provider__exited(struct provider *p, uint32_t pid)
{
	struct proc *proc = provider__proc(p, pid);

	return !proc || proc->exited;
}

/* Containers come and go (jobs, restarts): the ones no known process is
 * in are forgotten once there are many, so memory stays bounded. Runs
 * after the interval's records: no exited process is named any more. */
static void provider__sweep_containers(struct provider *p)
{
	struct hashmap *used;
	uint64_t pid, value;
	size_t pos = 0;

	if (containers__count(p->containers) <= CONTAINERS_SWEEP_AT)
		return;
	used = hashmap__new();
	while (hashmap__next(p->procs, &pos, &pid, &value)) {
		const struct proc *proc = (struct proc *)(uintptr_t)value;

		if (proc->ctr)
			hashmap__set(used, (uintptr_t)proc->ctr, 1);
	}
	containers__sweep(p->containers, used);
	hashmap__free(used);
}

void provider__end_interval(struct provider *p)
{
	uint64_t pid, value, *gone = NULL;
	size_t pos = 0, n = 0;

	/* A process's last events can reach the other ringbufs after its
	 * exit event was read (its sockets close, ending their last request,
	 * after sched_process_exit): an exited process is still named
	 * through the next interval. */
	gone = xcalloc(hashmap__count(p->procs) + 1, sizeof(*gone));
	while (hashmap__next(p->procs, &pos, &pid, &value)) {
		struct proc *proc = (struct proc *)(uintptr_t)value;

		if (proc->exited && proc->kept)
			gone[n++] = pid;
		else if (proc->exited)
			proc->kept = true;
	}
	for (size_t i = 0; i < n; i++)
		provider__proc_drop(p, gone[i]);
	free(gone);
	hashmap__free_values(p->graves, free);
	p->graves = hashmap__new();
	provider__sweep_containers(p);
	if (provider__read_ports(p))
		provider__resolve_all(p);
}

int provider__listeners(struct provider *p, const struct listener **out,
			uint64_t *version)
{
	return listen_cache__get(&p->listen, out, version);
}

void provider__for_each_selected(struct provider *p,
				 void (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	uint64_t pid, value;
	size_t pos = 0;

	while (hashmap__next(p->procs, &pos, &pid, &value)) {
		const struct proc *proc = (const struct proc *)(uintptr_t)value;

		if (proc->service && !proc->exited)
			fn(ctx, (uint32_t)pid);
	}
}

void provider__watch_selection(struct provider *p,
			       void (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	p->on_select = fn;
	p->on_select_ctx = ctx;
}

void provider__watch_lifecycle(struct provider *p,
			       void (*fn)(void *ctx,
					  const struct proc_lifecycle *change),
			       void *ctx)
{
	p->on_change = fn;
	p->on_change_ctx = ctx;
}

void provider__count_listens(struct provider *p,
			     const volatile uint64_t *changes)
{
	listen_cache__count(&p->listen, changes);
}

void provider__stats(struct provider *p, struct provider_stats *st)
{
	int fd = bpf_map__fd(p->skel->maps.provider_stats);
	__u32 lost = PROVIDER_RINGBUF_LOST, full = PROVIDER_PIDS_FULL;
	uint64_t pid, value;
	size_t pos = 0;

	memset(st, 0, sizeof(*st));
	st->lost = map_percpu_sum(fd, &lost);
	st->pids_full = map_percpu_sum(fd, &full);
	st->pid_changes = p->pid_changes;
	st->listen_reads = p->listen.version;
	st->listen_changes = p->listen.changes ? *p->listen.changes : 0;
	st->features_off = p->features_off;
	while (hashmap__next(p->procs, &pos, &pid, &value)) {
		st->processes++;
		if (((struct proc *)(uintptr_t)value)->service)
			st->selected++;
	}
}

void provider__destroy(struct provider *p)
{
	if (!p)
		return;
	hashmap__free_values(p->procs, free);
	hashmap__free_values(p->graves, free);
	hashmap__free(p->spent_pids);
	hashmap__free(p->port_pids);
	if (p->pid_service_gen)
		munmap(p->pid_service_gen, sizeof(uint64_t));
	listen_cache__free(&p->listen);
	provider_bpf__destroy(p->skel);
	containers__free(p->containers);
	free(p->names);
	free(p);
}
