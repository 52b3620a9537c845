// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The uprobes of TLS in plaintext, per process (see tls_attach.h).
 *
 * A uprobe attached with a pid puts its breakpoint only in that
 * process's mappings of the library: processes kmond does not monitor
 * run the library untouched. Each monitored process is looked at when it
 * joins a service and at every interval until it maps libssl.so.3 (a
 * process that loads it later, Python's `import ssl`, is found then);
 * a process attached stays so until it exits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "collectors/tcp/tls_attach.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "loader/live_store.h"
#include "provider/provider.h"

#define TLS_LIB "libssl.so.3"
/* Processes looked at per interval among those not attached: reading
 * their maps costs, and most monitored processes never map libssl. */
#define TLS_LOOKS_PER_SYNC 64
#define TLS_MAX_PROCS 1024

/* The functions and their programs: entry, and return. */
enum { FN_WRITE, FN_WRITE_EX, FN_READ, FN_READ_EX, FN_HANDSHAKE, NR_FNS };

static const char *const fn_names[NR_FNS] = {
	[FN_WRITE] = "SSL_write",
	[FN_WRITE_EX] = "SSL_write_ex",
	[FN_READ] = "SSL_read",
	[FN_READ_EX] = "SSL_read_ex",
	[FN_HANDSHAKE] = "SSL_do_handshake",
};

struct tls_proc {
	struct bpf_link *links[2 * NR_FNS];
	int nlinks;
};

struct tls_attach {
	struct tls_progs progs;
	volatile uint32_t *procs;
	struct hashmap *attached; /* pid -> struct tls_proc * */
	struct hashmap *looked; /* pid -> 1: selected, not attached */
	uint64_t failures;
	bool said_failure;
};

struct tls_attach *tls_attach__new(const struct tls_progs *progs,
				   volatile uint32_t *procs)
{
	struct tls_attach *t = xcalloc(1, sizeof(*t));

	t->progs = *progs;
	t->procs = procs;
	t->attached = hashmap__new();
	t->looked = hashmap__new();
	return t;
}

static void detach(struct tls_proc *p)
{
	for (int i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p);
}

static void detach_value(void *v)
{
	detach(v);
}

void tls_attach__free(struct tls_attach *t)
{
	if (!t)
		return;
	hashmap__free_values(t->attached, detach_value); /* and the map */
	hashmap__free(t->looked);
	free(t);
}

/* The path of the libssl.so.3 pid maps, as pid sees it, through its
 * root (a container's); false when it maps none. */
static bool mapped_lib(uint32_t pid, char *path, size_t len)
{
	char maps[64], line[4096], *file;
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		file = strchr(line, '/');
		if (!file || !strstr(file, "/" TLS_LIB))
			continue;
		file[strcspn(file, "\n")] = '\0';
		found = snprintf(path, len, "/proc/%u/root%s", pid, file) <
			(int)len;
	}
	fclose(f);
	return found;
}

static struct bpf_link *attach_one(struct bpf_program *prog, uint32_t pid,
				   const char *path, const char *fn, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = fn, .retprobe = ret);

	return bpf_program__attach_uprobe_opts(prog, pid, path, 0, &opts);
}

/* Every function's entry and return, or none. */
static struct tls_proc *attach_proc(struct tls_attach *t, uint32_t pid,
				    const char *path)
{
	struct bpf_program *entry[NR_FNS] = {
		t->progs.write,	  t->progs.write_ex,  t->progs.read,
		t->progs.read_ex, t->progs.handshake,
	};
	struct tls_proc *p = xcalloc(1, sizeof(*p));
	struct bpf_link *l;
	int err = 0;

	for (int f = 0; f < NR_FNS && !err; f++)
		for (int ret = 0; ret < 2 && !err; ret++) {
			l = attach_one(ret ? t->progs.exit : entry[f], pid,
				       path, fn_names[f], ret);
			if (!l)
				err = -errno;
			else
				p->links[p->nlinks++] = l;
		}
	if (!err)
		return p;
	t->failures++;
	if (!t->said_failure)
		log_warn("tcp: TLS of pid %u not read in plaintext: uprobe on "
			 "%s: %s",
			 pid, path, strerror(-err));
	t->said_failure = true;
	detach(p);
	return NULL;
}

void tls_attach__pid(struct tls_attach *t, uint32_t pid)
{
	char path[4200];
	struct tls_proc *p;

	if (hashmap__find(t->attached, pid))
		return;
	if (!mapped_lib(pid, path, sizeof(path)) ||
	    hashmap__count(t->attached) >= TLS_MAX_PROCS)
		return;
	p = attach_proc(t, pid, path);
	if (!p)
		return;
	hashmap__delete(t->looked, pid);
	hashmap__set(t->attached, pid, (uintptr_t)p);
	live_store(*t->procs, hashmap__count(t->attached));
	log_debug("tcp: TLS of pid %u read in plaintext (%s)", pid, path);
}

/* For each process selected now: a new one is looked at; one not
 * attached is marked 2 (still selected). */
static void look_at(void *ctx, uint32_t pid)
{
	struct tls_attach *t = ctx;

	if (hashmap__find(t->attached, pid))
		return;
	if (!hashmap__find(t->looked, pid))
		tls_attach__pid(t, pid);
	if (!hashmap__find(t->attached, pid))
		hashmap__set(t->looked, pid, 2);
}

/* Detaches the processes that exited. */
static void sweep(struct tls_attach *t, struct provider *pr)
{
	uint64_t key, val, *gone = NULL;
	size_t pos = 0, n = 0;

	while (hashmap__next(t->attached, &pos, &key, &val))
		if (provider__exited(pr, key)) {
			gone = xrealloc(gone, (n + 1) * sizeof(*gone));
			gone[n++] = key;
		}
	for (size_t i = 0; i < n; i++) {
		detach((struct tls_proc *)(uintptr_t)*hashmap__find(t->attached,
								    gone[i]));
		hashmap__delete(t->attached, gone[i]);
	}
	free(gone);
	live_store(*t->procs, hashmap__count(t->attached));
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

uint64_t tls_attach__procs(const struct tls_attach *t)
{
	return t ? hashmap__count(t->attached) : 0;
}

uint64_t tls_attach__failures(const struct tls_attach *t)
{
	return t ? t->failures : 0;
}
