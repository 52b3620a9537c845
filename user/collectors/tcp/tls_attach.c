// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The uprobes of TLS in plaintext, per process (see tls_attach.h).
 *
 * A uprobe attached with a pid puts its breakpoint only in that
 * process's mappings of the library: processes kmond does not monitor
 * run the library untouched. A monitored process is attached as the
 * provider tells of it: at its exec, to the library its dynamic linker
 * will map (tls_target.c; the kernel puts the breakpoints in as the
 * library is mapped, so a short-lived client is read from its first
 * SSL call when the attach wins the race with it); at its fork, to its
 * parent's (a forked server's child runs the parent's library, but the
 * kernel keeps a per-pid uprobe out of the child); when it joins a
 * service; and at every interval, until it maps libssl.so.3 (Python's
 * `import ssl` loads it late). It is detached at its exit, at an exec
 * into a program without the library, or when it leaves its service. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collectors/tcp/tls_attach.h"
#include "collectors/tcp/tls_detach.h"
#include "collectors/tcp/tls_symbols.h"
#include "collectors/tcp/tls_target.h"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "loader/uprobe_multi.h"
#include "provider/provider.h"

/* Processes looked at per interval among those not attached: reading
 * their maps costs, and most monitored processes never map libssl. */
#define TLS_LOOKS_PER_SYNC 64
#define TLS_MAX_PROCS 1024
#define TLS_MAX_FILES 64 /* files' offsets remembered; then forgotten */

/* The functions and their programs: entry, and return. */
enum { FN_WRITE, FN_WRITE_EX, FN_READ, FN_READ_EX, FN_HANDSHAKE, NR_FNS };

static const char *const fn_names[NR_FNS] = {
	[FN_WRITE] = "SSL_write",
	[FN_WRITE_EX] = "SSL_write_ex",
	[FN_READ] = "SSL_read",
	[FN_READ_EX] = "SSL_read_ex",
	[FN_HANDSHAKE] = "SSL_do_handshake",
};

/* Where the functions are in one file (uprobe_multi links are given
 * offsets, not names). */
struct tls_file {
	dev_t dev;
	ino_t ino;
	uint64_t offs[NR_FNS];
};

struct tls_proc {
	struct tls_link links[2 * NR_FNS];
	int nlinks;
	char *rel; /* the file, in the process's root ("": its program) */
	dev_t dev; /* the file, whatever the path that names it */
	ino_t ino;
	uint64_t attached_ns; /* mono_ns() when attached */
};

struct tls_attach {
	struct tls_progs progs;
	volatile uint32_t *procs;
	struct tls_targets *targets;
	struct tls_detach *detach;
	struct hashmap *attached; /* pid -> struct tls_proc * */
	struct hashmap *looked; /* pid -> 1: selected, not attached */
	struct hashmap *files; /* file_key() -> struct tls_file * */
	struct tls_attach_stats st;
	bool said_failure;
};

struct tls_attach *tls_attach__new(const struct tls_progs *progs,
				   volatile uint32_t *procs)
{
	struct tls_attach *t = xcalloc(1, sizeof(*t));

	t->progs = *progs;
	t->procs = procs;
	t->targets = tls_targets__new();
	t->detach = tls_detach__new();
	t->attached = hashmap__new();
	t->looked = hashmap__new();
	t->files = hashmap__new();
	return t;
}

/* Its links go to the thread that destroys them (tls_detach.h). */
static void detach(struct tls_attach *t, struct tls_proc *p)
{
	tls_detach__push(t->detach, p->links, p->nlinks);
	free(p->rel);
	free(p);
}

void tls_attach__free(struct tls_attach *t)
{
	uint64_t key, val;
	size_t pos = 0;

	if (!t)
		return;
	while (hashmap__next(t->attached, &pos, &key, &val))
		detach(t, (struct tls_proc *)(uintptr_t)val);
	hashmap__free(t->attached);
	tls_detach__free(t->detach); /* once every link is destroyed */
	hashmap__free(t->looked);
	hashmap__free_values(t->files, free);
	tls_targets__free(t->targets);
	free(t);
}

static struct tls_proc *attached(const struct tls_attach *t, uint32_t pid)
{
	uint64_t *v = hashmap__find(t->attached, pid);

	return v ? (struct tls_proc *)(uintptr_t)*v : NULL;
}

static void forget(struct tls_attach *t, uint32_t pid)
{
	struct tls_proc *p = attached(t, pid);

	hashmap__delete(t->looked, pid);
	if (!p)
		return;
	detach(t, p);
	hashmap__delete(t->attached, pid);
	live_store(*t->procs, hashmap__count(t->attached));
}

static struct bpf_program *entry_prog(const struct tls_progs *progs, int f)
{
	struct bpf_program *entry[NR_FNS] = {
		progs->write,	progs->write_ex,  progs->read,
		progs->read_ex, progs->handshake,
	};

	return entry[f];
}

/* Each function's entry and return as a perf event a probe: 0, or
 * -errno. */
static int attach_perf(struct tls_attach *t, uint32_t pid, const char *path,
		       struct tls_proc *p)
{
	struct bpf_link *l;

	for (int f = 0; f < NR_FNS; f++)
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, opts,
				    .func_name = fn_names[f], .retprobe = ret);

			l = bpf_program__attach_uprobe_opts(
				ret ? t->progs.exit : entry_prog(&t->progs, f),
				pid, path, 0, &opts);
			if (!l)
				return -errno;
			p->links[p->nlinks++] = (struct tls_link){ l, -1 };
		}
	return 0;
}

static uint64_t file_key(const struct stat *st)
{
	return (uint64_t)st->st_ino * 0x9e3779b97f4a7c15ull ^ st->st_dev;
}

/* The functions' offsets in the file at path (st), read once a file:
 * NULL when it lacks one of them. */
static const struct tls_file *
file_offsets(struct tls_attach *t, const char *path, const struct stat *st)
{
	uint64_t *v = hashmap__find(t->files, file_key(st));
	struct tls_file *file = v ? (struct tls_file *)(uintptr_t)*v : NULL;

	if (file && file->dev == st->st_dev && file->ino == st->st_ino)
		return file;
	file = xcalloc(1, sizeof(*file));
	file->dev = st->st_dev;
	file->ino = st->st_ino;
	if (elf_funcs__file_offsets(path, fn_names, NR_FNS, file->offs) !=
	    NR_FNS) {
		free(file);
		return NULL;
	}
	if (v) { /* another file under its key */
		free((void *)(uintptr_t)*v);
		hashmap__delete(t->files, file_key(st));
	}
	if (hashmap__count(t->files) >= TLS_MAX_FILES) {
		hashmap__free_values(t->files, free);
		t->files = hashmap__new();
	}
	hashmap__set(t->files, file_key(st), (uintptr_t)file);
	return file;
}

/* A uprobe_multi link per entry program and one for the returns: six
 * calls, and none waits behind another process's links being
 * destroyed (uprobe_multi.h). 0, or -errno. */
static int attach_multi(struct tls_attach *t, uint32_t pid, const char *path,
			const struct stat *st, struct tls_proc *p)
{
	const struct tls_file *file = file_offsets(t, path, st);
	int fd;

	if (!file)
		return -ENOENT;
	for (int f = 0; f < NR_FNS; f++) {
		fd = uprobe_multi_link(
			bpf_program__fd(entry_prog(&t->progs, f)), path,
			&file->offs[f], 1, pid, false);
		if (fd < 0)
			return -errno;
		p->links[p->nlinks++] = (struct tls_link){ NULL, fd };
	}
	fd = uprobe_multi_link(bpf_program__fd(t->progs.exit), path, file->offs,
			       NR_FNS, pid, true);
	if (fd < 0)
		return -errno;
	p->links[p->nlinks++] = (struct tls_link){ NULL, fd };
	return 0;
}

static bool gone(uint32_t pid)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%u", pid);
	return access(dir, F_OK) != 0;
}

/* Every function's entry and return, or none: 0, -ESRCH when pid went
 * meanwhile, or why not. */
static int attach_proc(struct tls_attach *t, uint32_t pid, const char *path,
		       const struct stat *st, struct tls_proc *p)
{
	int err = t->progs.multi ? attach_multi(t, pid, path, st, p) :
				   attach_perf(t, pid, path, p);

	if (err == -ESRCH || (err && gone(pid))) /* or a zombie */
		return -ESRCH;
	if (err) {
		t->st.failures++;
		if (!t->said_failure)
			log_warn("tcp: TLS of pid %u not read in plaintext: "
				 "uprobe on %s: %s",
				 pid, path, strerror(-err));
		t->said_failure = true;
	}
	return err;
}

/* pid's uprobes on rel (in its root): 0, -ESRCH gone, or why not. */
static int attach(struct tls_attach *t, uint32_t pid, const char *rel)
{
	char path[PATH_MAX + 64];
	struct tls_proc *p;
	struct stat st;
	int err;

	if (!tls_target_path(pid, rel, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (stat(path, &st)) /* its root went with it (a zombie's) */
		return -ESRCH;
	if (hashmap__count(t->attached) >= TLS_MAX_PROCS)
		return -ENOSPC;
	p = xcalloc(1, sizeof(*p));
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	err = attach_proc(t, pid, path, &st, p);
	if (err) {
		detach(t, p);
		return err;
	}
	p->rel = xstrdup(rel);
	p->attached_ns = mono_ns();
	hashmap__delete(t->looked, pid);
	hashmap__set(t->attached, pid, (uintptr_t)p);
	live_store(*t->procs, hashmap__count(t->attached));
	log_debug("tcp: TLS of pid %u read in plaintext (%s)", pid, path);
	return 0;
}

/* Attached to the file of pid's SSL functions now (a program it runs
 * since it was attached may have another): 0, -ENOENT none, -ESRCH
 * gone, or why not. */
static int attach_found(struct tls_attach *t, uint32_t pid)
{
	struct tls_proc *p = attached(t, pid);
	char rel[PATH_MAX], path[PATH_MAX + 64];
	int err = tls_targets__find(t->targets, pid, rel, sizeof(rel));
	struct stat st;

	if (p && !err && tls_target_path(pid, rel, path, sizeof(path)) &&
	    !stat(path, &st) && st.st_dev == p->dev && st.st_ino == p->ino)
		return 0; /* the same file: its uprobes serve the new program */
	if (p)
		forget(t, pid);
	return err ? err : attach(t, pid, rel);
}

void tls_attach__pid(struct tls_attach *t, uint32_t pid)
{
	if (!attached(t, pid))
		attach_found(t, pid);
}

/* How late the uprobes were in place for what started at ns. */
static void note_delay(struct tls_attach *t, uint32_t pid, uint64_t ns)
{
	struct tls_proc *p = attached(t, pid);
	uint64_t late;

	if (!p)
		return;
	late = p->attached_ns > ns ? p->attached_ns - ns : 0;
	t->st.at_start++;
	if (late > t->st.delay_max_ns)
		t->st.delay_max_ns = late;
	log_debug("tcp: TLS of pid %u attached %lu us after it started", pid,
		  (unsigned long)(late / 1000));
}

void tls_attach__change(struct tls_attach *t,
			const struct proc_lifecycle *change)
{
	struct tls_proc *parent;
	int err;

	switch (change->what) {
	case PROC_EXITED:
		forget(t, change->pid);
		return;
	case PROC_FORKED:
		parent = attached(t, change->ppid);
		if (!parent)
			return;
		err = attach(t, change->pid, parent->rel);
		break;
	case PROC_EXECED:
	default:
		err = attach_found(t, change->pid);
		break;
	}
	if (err == -ESRCH)
		t->st.gone_first++;
	else if (!err)
		note_delay(t, change->pid, change->ns);
}

/* For each process selected now: a new one is looked at; one not
 * attached is marked 2 (still selected). */
static void look_at(void *ctx, uint32_t pid)
{
	struct tls_attach *t = ctx;

	if (attached(t, pid))
		return;
	if (!hashmap__find(t->looked, pid))
		tls_attach__pid(t, pid);
	if (!attached(t, pid))
		hashmap__set(t->looked, pid, 2);
}

/* Detaches the processes that exited or left their service. */
static void sweep(struct tls_attach *t, struct provider *pr)
{
	uint64_t key, val, *gone_pids = NULL;
	size_t pos = 0, n = 0;

	while (hashmap__next(t->attached, &pos, &key, &val))
		if (provider__exited(pr, key) || !provider__service(pr, key)) {
			gone_pids = xrealloc(gone_pids,
					     (n + 1) * sizeof(*gone_pids));
			gone_pids[n++] = key;
		}
	for (size_t i = 0; i < n; i++)
		forget(t, gone_pids[i]);
	free(gone_pids);
}

/* Looks again at some of the processes selected and not attached (a
 * library loaded later): TLS_LOOKS_PER_SYNC of them. */
static void look_again(struct tls_attach *t)
{
	uint64_t key, val, *again = NULL;
	size_t pos = 0, n = 0;

	while (hashmap__next(t->looked, &pos, &key, &val) &&
	       n < TLS_LOOKS_PER_SYNC)
		if (val == 2) {
			again = xrealloc(again, (n + 1) * sizeof(*again));
			again[n++] = key;
		}
	for (size_t i = 0; i < n; i++)
		tls_attach__pid(t, again[i]);
	free(again);
}

void tls_attach__sync(struct tls_attach *t, struct provider *pr)
{
	uint64_t key, val, *v, *stale = NULL;
	size_t pos = 0, n = 0;

	provider__for_each_selected(pr, look_at, t);
	look_again(t);
	/* those not marked are no longer selected; the rest unmarked for
	 * the next sync */
	while (hashmap__next(t->looked, &pos, &key, &val))
		if (val != 2) {
			stale = xrealloc(stale, (n + 1) * sizeof(*stale));
			stale[n++] = key;
		} else if ((v = hashmap__find(t->looked, key))) {
			*v = 1;
		}
	for (size_t i = 0; i < n; i++)
		hashmap__delete(t->looked, stale[i]);
	free(stale);
	sweep(t, pr);
}

void tls_attach__stats(struct tls_attach *t, struct tls_attach_stats *st)
{
	*st = t->st;
	st->procs = hashmap__count(t->attached);
	t->st.delay_max_ns = 0;
}
