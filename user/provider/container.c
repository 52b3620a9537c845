// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* strchrnul */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/json_parse.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "provider/container.h"
#include "provider/procinfo.h"

#define CGROUP2_MAGIC 0x63677270 /* linux/magic.h CGROUP2_SUPER_MAGIC */
#define OCI_MAX (4 << 20) /* a config.json larger than this is not read */

/* Where runtimes keep a container's OCI bundle (its id between dir and
 * file), under the host's root. The CRI runtimes write the pod into its
 * annotations. */
static const struct {
	const char *dir, *file;
} bundle_globs[] = {
	/* containerd (any namespace: k8s.io, moby ...) */
	{ "/run/containerd/io.containerd.runtime.v2.task/*/", "/config.json" },
	/* CRI-O, and podman's run root */
	{ "/run/containers/storage/overlay-containers/",
	  "/userdata/config.json" },
	/* podman's graph root */
	{ "/var/lib/containers/storage/overlay-containers/",
	  "/userdata/config.json" },
	/* Docker before containerd 1.5 */
	{ "/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/",
	  "/config.json" },
};

#define BUNDLE_TRIES 4 /* lookups of a container whose bundle is not found */

struct entry {
	struct container c; /* first: handed out as the container */
	int misses; /* lookups that found no bundle */
};

struct containers {
	char root[256]; /* "": look where read_bundle says */
	struct hashmap *byid; /* fnv1a(id) -> struct entry * */
};

/* "pod<uid>" (cgroupfs) or "kubepods-<qos>-pod<uid>.slice" (systemd,
 * with '_' for '-'): the pod's uid. */
static bool component_pod_uid(const char *c, size_t len, char *uid)
{
	const char *p = NULL;
	size_t n;

	if (len > 6 && memcmp(c + len - 6, ".slice", 6) == 0)
		len -= 6;
	for (size_t i = 0; i + 3 <= len; i++)
		if (memcmp(c + i, "pod", 3) == 0 && (i == 0 || c[i - 1] == '-'))
			p = c + i + 3;
	if (!p)
		return false;
	n = len - (p - c);
	if (n != CONTAINER_UID_MAX - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];

		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		uid[i] = ch;
	}
	uid[n] = '\0';
	return true;
}

static void path_pod_uid(const char *path, size_t len, char *uid)
{
	const char *c = path, *end = path + len;

	while (c < end) {
		const char *slash = memchr(c, '/', end - c);
		const char *cend = slash ? slash : end;

		if (cend > c && component_pod_uid(c, cend - c, uid))
			return;
		c = cend + 1;
	}
}

bool container__parse_cgroups(const char *text, struct container *c)
{
	const char *line = text;
	char path[4096];

	memset(c, 0, sizeof(*c));
	/* The first line naming a container: on hybrid hosts the v2 line
	 * is "0::/" and the path is in the v1 ones. */
	while (*line) {
		const char *end = strchrnul(line, '\n');
		const char *c1 = memchr(line, ':', end - line);
		const char *c2 = c1 ? memchr(c1 + 1, ':', end - c1 - 1) : NULL;
		size_t n = c2 ? (size_t)(end - c2 - 1) : 0;

		line = *end ? end + 1 : end;
		if (!c2 || n >= sizeof(path))
			continue;
		memcpy(path, c2 + 1, n);
		path[n] = '\0';
		if (!cgroup_container_id(path, c->id, sizeof(c->id)))
			continue;
		path_pod_uid(path, n, c->pod_uid);
		return true;
	}
	return false;
}

static void copy_annotation(const struct json_value *ann, const char *key,
			    char *dst, size_t len)
{
	const char *v = json__str(json__get(ann, key));

	if (v && *v && !*dst && strlen(v) < len)
		strcpy(dst, v);
}

int container__parse_oci(const char *text, size_t len, struct container *c)
{
	struct json_error err;
	struct json_value *root = json__parse(text, len, &err);
	const struct json_value *ann;
	const char *type, *labels;

	if (!root)
		return -1;
	ann = json__get(root, "annotations");
	/* containerd's names first, then CRI-O's (and dockershim's). */
	copy_annotation(ann, "io.kubernetes.cri.sandbox-name", c->pod,
			sizeof(c->pod));
	copy_annotation(ann, "io.kubernetes.pod.name", c->pod, sizeof(c->pod));
	copy_annotation(ann, "io.kubernetes.cri.sandbox-namespace", c->ns,
			sizeof(c->ns));
	copy_annotation(ann, "io.kubernetes.pod.namespace", c->ns,
			sizeof(c->ns));
	copy_annotation(ann, "io.kubernetes.cri.sandbox-uid", c->pod_uid,
			sizeof(c->pod_uid));
	copy_annotation(ann, "io.kubernetes.pod.uid", c->pod_uid,
			sizeof(c->pod_uid));
	copy_annotation(ann, "io.kubernetes.cri.container-name", c->name,
			sizeof(c->name));
	copy_annotation(ann, "io.kubernetes.container.name", c->name,
			sizeof(c->name));
	/* CRI-O: the pod's labels are on its sandbox container */
	type = json__str(json__get(ann, "io.kubernetes.cri-o.ContainerType"));
	c->is_sandbox = type && strcmp(type, "sandbox") == 0;
	labels = json__str(json__get(ann, "io.kubernetes.cri-o.Labels"));
	if (c->is_sandbox && labels && !c->labels)
		c->labels = xstrdup(labels);
	copy_annotation(ann, "io.kubernetes.cri-o.SandboxID", c->sandbox,
			sizeof(c->sandbox));
	json__free(root);
	return 0;
}

bool container__label(const struct container *c, const char *key, char *out,
		      size_t len)
{
	struct json_error err;
	struct json_value *root;
	const char *v;
	bool ok;

	if (!c || !c->labels)
		return false;
	root = json__parse(c->labels, strlen(c->labels), &err);
	v = json__str(json__get(root, key));
	ok = v && *v && strlen(v) < len;
	if (ok)
		strcpy(out, v);
	json__free(root);
	return ok;
}

void container__clear(struct container *c)
{
	free(c->labels);
	c->labels = NULL;
}

/* --- the cache --- */

struct containers *containers__new(const char *host_root)
{
	struct containers *cs = xcalloc(1, sizeof(*cs));

	snprintf(cs->root, sizeof(cs->root), "%s", host_root ? host_root : "");
	cs->byid = hashmap__new();
	return cs;
}

static char *read_small_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	ssize_t n;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < OCI_MAX) {
		buf = xmalloc(st.st_size + 1);
		n = read(fd, buf, st.st_size);
		if (n != st.st_size) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			*len = n;
		}
	}
	close(fd);
	return buf;
}

/* The parent of pid; 0 when unknown or pid 1. */
static uint32_t parent_of(uint32_t pid)
{
	char path[64], line[1024];
	uint32_t ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) || procinfo__parse_ppid(line, &ppid))
		ppid = 0;
	fclose(f);
	return ppid;
}

/* The first bundle for c->id under root fills in its pod; with
 * sandbox, also the labels of the pod's sandbox container it names. */
static bool read_bundle_under(const char *root, struct container *c,
			      bool sandbox)
{
	char pattern[1024], abs[512];

	for (size_t i = 0; i < ARRAY_SIZE(bundle_globs); i++) {
		glob_t g;
		int found = 0;

		snprintf(abs, sizeof(abs), "%s%s%s", bundle_globs[i].dir, c->id,
			 bundle_globs[i].file);
		snprintf(pattern, sizeof(pattern), "%s%s", root, abs);
		if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc && !found; j++) {
			size_t len;
			char *text = read_small_file(g.gl_pathv[j], &len);

			if (text && container__parse_oci(text, len, c) == 0)
				found = 1;
			else if (text)
				log_debug("%s: not a JSON object",
					  g.gl_pathv[j]);
			free(text);
		}
		globfree(&g);
		if (found && sandbox && !c->is_sandbox && c->sandbox[0] &&
		    !c->labels) {
			struct container pod = { 0 };

			memcpy(pod.id, c->sandbox, sizeof(pod.id));
			read_bundle_under(root, &pod, false);
			c->labels =
				pod.labels; /* the sandbox's own: the pod's */
		}
		if (found) {
			log_debug("container %.12s: pod %s/%s (%s%s)", c->id,
				  c->ns[0] ? c->ns : "-",
				  c->pod[0] ? c->pod : "-", root, abs);
			return true;
		}
	}
	return false;
}

/* The bundles are on the host: kmond's own root when it runs there (or
 * has them mounted), else the host's root as a process of the host's
 * mount namespace sees it: pid 1 (hostPID), or, when pid 1's root is
 * closed to kmond, the process itself or one of its ancestors (the
 * runtime's shim: conmon, containerd-shim; a process just placed in its
 * cgroup may not have left the host's mount namespace yet). */
static bool containers__read_bundle(struct containers *cs, struct container *c,
				    uint32_t pid)
{
	char root[64], ns[64], last[64] = "";
	ssize_t n;

	if (cs->root[0])
		return read_bundle_under(cs->root, c, true);
	if (read_bundle_under("", c, true) ||
	    read_bundle_under("/proc/1/root", c, true))
		return true;
	for (int depth = 0; pid > 1 && depth < 8;
	     depth++, pid = parent_of(pid)) {
		snprintf(root, sizeof(root), "/proc/%u/ns/mnt", pid);
		n = readlink(root, ns, sizeof(ns) - 1);
		if (n <= 0)
			return false;
		ns[n] = '\0';
		if (strcmp(ns, last) == 0)
			continue; /* the same files as the last one */
		memcpy(last, ns, n + 1);
		snprintf(root, sizeof(root), "/proc/%u/root", pid);
		if (read_bundle_under(root, c, true))
			return true;
	}
	return false;
}

static const struct container *
containers__find(struct containers *cs, const char *cgroups, uint32_t pid)
{
	struct container parsed;
	struct entry *e = NULL;
	uint64_t key, *v;

	if (!container__parse_cgroups(cgroups, &parsed))
		return NULL;
	/* Entries live as long as the cache (procs point at them): a hash
	 * shared by two ids takes the next free key. */
	for (key = fnv1a(parsed.id, strlen(parsed.id));
	     (v = hashmap__find(cs->byid, key)); key++) {
		e = (struct entry *)(uintptr_t)*v;
		if (strcmp(e->c.id, parsed.id) == 0)
			break;
		e = NULL;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->c = parsed;
		hashmap__set(cs->byid, key, (uintptr_t)e);
	} else if (!e->misses || e->misses >= BUNDLE_TRIES) {
		return &e->c;
	}
	/* A bundle may not be readable yet (or from where kmond looked):
	 * a later exec or cgroup move of the container's processes tries
	 * again, a few times. */
	if (containers__read_bundle(cs, &e->c, pid))
		e->misses = 0;
	else if (++e->misses == 1 || e->misses == BUNDLE_TRIES)
		log_debug("container %.12s: no bundle found%s", e->c.id,
			  e->misses == BUNDLE_TRIES ? " (last try)" : "");
	return &e->c;
}

const struct container *containers__of_pid(struct containers *cs, uint32_t pid,
					   bool *readable)
{
	char text[4096];

	*readable = procinfo__cgroups(pid, text, sizeof(text)) == 0;
	return *readable ? containers__find(cs, text, pid) : NULL;
}

const struct container *containers__get(struct containers *cs,
					const char *cgroups)
{
	return containers__find(cs, cgroups, 0);
}

size_t containers__count(const struct containers *cs)
{
	return hashmap__count(cs->byid);
}

/* A container of the table, and what it holds. */
static void container_free(void *c)
{
	container__clear(c);
	free(c);
}

void containers__sweep(struct containers *cs, const struct hashmap *keep)
{
	uint64_t key, value, *gone;
	size_t pos = 0, n = 0;

	gone = xcalloc(hashmap__count(cs->byid) + 1, sizeof(*gone));
	while (hashmap__next(cs->byid, &pos, &key, &value))
		if (!hashmap__find(keep, value))
			gone[n++] = key;
	for (size_t i = 0; i < n; i++) {
		struct container *c =
			(struct container *)(uintptr_t)*hashmap__find(cs->byid,
								      gone[i]);

		hashmap__delete(cs->byid, gone[i]);
		container_free(c);
	}
	free(gone);
}

void containers__free(struct containers *cs)
{
	if (!cs)
		return;
	hashmap__free_values(cs->byid, container_free);
	free(cs);
}

const char *cgroup__mode(void)
{
	struct statfs fs;

	if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_MAGIC)
		return "v2";
	if (statfs("/sys/fs/cgroup/unified", &fs) == 0 &&
	    fs.f_type == CGROUP2_MAGIC)
		return "hybrid";
	return "v1";
}

bool container__k8s_matches(const struct container *c, const char *ns,
			    const char *pod_glob)
{
	if (!c || !c->pod[0])
		return false;
	if (ns[0] && strcmp(ns, c->ns) != 0)
		return false;
	return !pod_glob[0] || fnmatch(pod_glob, c->pod, 0) == 0;
}
