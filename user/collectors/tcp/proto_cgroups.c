// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collectors/tcp/proto_cgroups.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "provider/procinfo.h"
#include "provider/provider.h"

struct attached {
	char *path; /* in the hierarchy: "/" is its root */
	struct bpf_link *in, *out;
};

struct proto_cgroups {
	struct bpf_program *ingress, *egress; /* egress: NULL when not used */
	char mount[PATH_MAX]; /* of the v2 hierarchy */
	struct attached *set;
	size_t n, cap;
	struct hashmap *paths; /* pid -> its cgroup path (char *), as read */
	uint64_t failures;
};

/* Where the cgroup v2 hierarchy is mounted (false when it is not). */
static bool cgroup2_mount(char *path, size_t len)
{
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found &&
	       fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(path, len, "%s", dir);
			found = true;
		}
	}
	fclose(f);
	return found;
}

struct proto_cgroups *proto_cgroups__new(struct bpf_program *ingress,
					 struct bpf_program *egress)
{
	struct proto_cgroups *pc = xcalloc(1, sizeof(*pc));

	if (!cgroup2_mount(pc->mount, sizeof(pc->mount))) {
		free(pc);
		return NULL;
	}
	pc->ingress = ingress;
	pc->egress = egress;
	pc->paths = hashmap__new();
	return pc;
}

static void detach(struct proto_cgroups *pc, size_t i)
{
	log_debug("tcp: protocol capture leaves cgroup %s", pc->set[i].path);
	bpf_link__destroy(pc->set[i].in);
	bpf_link__destroy(pc->set[i].out);
	free(pc->set[i].path);
	pc->set[i] = pc->set[--pc->n];
}

void proto_cgroups__free(struct proto_cgroups *pc)
{
	if (!pc)
		return;
	while (pc->n)
		detach(pc, pc->n - 1);
	free(pc->set);
	hashmap__free_values(pc->paths, free);
	free(pc);
}

/* The cgroup of pid now, into path; false when it is gone or has none in
 * the v2 hierarchy. A path outside kmond's own cgroup namespace ("/.."
 * first: kmond in a container with a namespace of its own, the host's
 * hierarchy mounted in) cannot be found under the mount: the root stands
 * for it, which covers every cgroup. */
static bool read_path(uint32_t pid, char *path, size_t len)
{
	char text[16384];

	/* a text that fills the buffer may have lost its "0::" line's end */
	if (procinfo__cgroups(pid, text, sizeof(text)) ||
	    strlen(text) >= sizeof(text) - 1 ||
	    !procinfo__parse_cgroup2(text, path, len))
		return false;
	if (cgroup_path_under(path, "/.."))
		snprintf(path, len, "/");
	return true;
}

static ssize_t attached_at(const struct proto_cgroups *pc, const char *path)
{
	for (size_t i = 0; i < pc->n; i++)
		if (!strcmp(pc->set[i].path, path))
			return (ssize_t)i;
	return -1;
}

static bool covered(const struct proto_cgroups *pc, const char *path)
{
	for (size_t i = 0; i < pc->n; i++)
		if (cgroup_path_under(path, pc->set[i].path))
			return true;
	return false;
}

static struct bpf_link *attach_one(struct bpf_program *prog, int fd)
{
	return prog ? bpf_program__attach_cgroup(prog, fd) : NULL;
}

static void attach(struct proto_cgroups *pc, const char *path)
{
	char dir[PATH_MAX * 2];
	struct attached a = { 0 };
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%s%s", pc->mount, path);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		err = -errno;
	if (!err && !(a.in = attach_one(pc->ingress, fd)))
		err = -errno;
	if (!err && pc->egress && !(a.out = attach_one(pc->egress, fd)))
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (err) {
		/* the process may have gone, and its cgroup with it */
		log_debug("tcp: protocol capture cannot attach to %s: %s", dir,
			  strerror(-err));
		bpf_link__destroy(a.in);
		pc->failures++;
		return;
	}
	log_debug("tcp: protocol capture runs in cgroup %s", path);
	if (pc->n == pc->cap) {
		pc->cap = pc->cap ? 2 * pc->cap : 8;
		pc->set = xrealloc(pc->set, pc->cap * sizeof(*pc->set));
	}
	a.path = xstrdup(path);
	pc->set[pc->n++] = a;
}

void proto_cgroups__add_pid(void *ctx, uint32_t pid)
{
	struct proto_cgroups *pc = ctx;
	char path[PATH_MAX];
	uint64_t *old = hashmap__find(pc->paths, pid);

	if (!read_path(pid, path, sizeof(path)))
		return;
	if (old)
		free((char *)(uintptr_t)*old);
	hashmap__set(pc->paths, pid, (uintptr_t)xstrdup(path));
	if (!covered(pc, path))
		attach(pc, path);
}

/* The distinct cgroups of the processes in a service, read afresh only
 * for processes not seen before. */
struct gather {
	struct proto_cgroups *pc;
	struct hashmap *paths; /* the new pid -> path */
	const char **wanted;
	size_t n, cap;
};

static void gather_pid(void *ctx, uint32_t pid)
{
	struct gather *g = ctx;
	uint64_t *known = hashmap__find(g->pc->paths, pid);
	char buf[PATH_MAX];
	const char *path;

	if (known) { /* moved over: the old map no longer owns it */
		path = (const char *)(uintptr_t)*known;
		hashmap__delete(g->pc->paths, pid);
	} else if (read_path(pid, buf, sizeof(buf))) {
		path = xstrdup(buf);
	} else {
		return;
	}
	hashmap__set(g->paths, pid, (uintptr_t)path);
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->wanted[i], path))
			return;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 16;
		g->wanted = xrealloc(g->wanted, g->cap * sizeof(*g->wanted));
	}
	g->wanted[g->n++] = path;
}

/* Whether wanted[i] is under another of the wanted cgroups. */
static bool under_another(const struct gather *g, size_t i)
{
	for (size_t j = 0; j < g->n; j++)
		if (j != i && cgroup_path_under(g->wanted[i], g->wanted[j]))
			return true;
	return false;
}

/* Whether attached cgroup path is still needed: it is one of the cover,
 * or a cgroup of the cover under it did not get its own programs. */
static bool still_needed(const struct proto_cgroups *pc, const struct gather *g,
			 const bool *cover, const char *path)
{
	for (size_t i = 0; i < g->n; i++) {
		if (!cover[i] || !cgroup_path_under(g->wanted[i], path))
			continue;
		if (!strcmp(g->wanted[i], path) ||
		    attached_at(pc, g->wanted[i]) < 0)
			return true;
	}
	return false;
}

void proto_cgroups__sync(struct proto_cgroups *pc, struct provider *p,
			 bool every_process)
{
	struct gather g = { .pc = pc, .paths = hashmap__new() };
	bool *cover;

	if (every_process) { /* the root covers every cgroup */
		g.wanted = xmalloc(sizeof(*g.wanted));
		g.wanted[g.n++] = "/";
	} else {
		provider__for_each_selected(p, gather_pid, &g);
	}
	cover = xcalloc(g.n + 1, sizeof(*cover));
	/* attach first, then detach: a segment that meets both runs is
	 * captured once (the programs take each byte of a stream once) */
	for (size_t i = 0; i < g.n; i++) {
		cover[i] = !under_another(&g, i);
		if (cover[i] && attached_at(pc, g.wanted[i]) < 0)
			attach(pc, g.wanted[i]);
	}
	for (size_t i = pc->n; i-- > 0;)
		if (!still_needed(pc, &g, cover, pc->set[i].path))
			detach(pc, i);
	free(cover);
	free(g.wanted);
	hashmap__free_values(pc->paths, free);
	pc->paths = g.paths;
}

size_t proto_cgroups__attached(const struct proto_cgroups *pc)
{
	return pc ? pc->n : 0;
}

uint64_t proto_cgroups__failures(const struct proto_cgroups *pc)
{
	return pc ? pc->failures : 0;
}
