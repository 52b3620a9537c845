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

#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/json_parse.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "provider/container.h"
#include "provider/procinfo.h"

#define CGROUP2_MAGIC 0x63677270 /* linux/magic.h CGROUP2_SUPER_MAGIC */
#define OCI_MAX (4 << 20) /* a config.json larger than this is not read */

/* Where runtimes keep a container's OCI bundle (%s: its id), under the
 * host's root. The CRI runtimes write the pod into its annotations. */
static const char *const bundle_globs[] = {
	/* containerd (any namespace: k8s.io, moby ...) */
	"/run/containerd/io.containerd.runtime.v2.task/*/%s/config.json",
	/* CRI-O, and podman's run root */
	"/run/containers/storage/overlay-containers/%s/userdata/config.json",
	/* podman's graph root */
	"/var/lib/containers/storage/overlay-containers/%s/userdata/config.json",
	/* Docker before containerd 1.5 */
	"/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/%s/config.json",
};

struct containers {
	char root[256];
	struct hashmap *byid; /* fnv1a(id) -> struct container * */
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
	json__free(root);
	return 0;
}

/* --- the cache --- */

struct containers *containers__new(const char *host_root)
{
	struct containers *cs = xcalloc(1, sizeof(*cs));

	if (!host_root)
		host_root = access("/proc/1/root/", R_OK | X_OK) == 0 ?
				    "/proc/1/root" : "";
	snprintf(cs->root, sizeof(cs->root), "%s", host_root);
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

/* The first bundle found for c->id fills in its pod. */
static void containers__read_bundle(struct containers *cs,
				    struct container *c)
{
	char pattern[1024], abs[512];

	for (size_t i = 0; i < sizeof(bundle_globs) / sizeof(bundle_globs[0]);
	     i++) {
		glob_t g;
		int found = 0;

		snprintf(abs, sizeof(abs), bundle_globs[i], c->id);
		snprintf(pattern, sizeof(pattern), "%s%s", cs->root, abs);
		if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc && !found; j++) {
			size_t len;
			char *text = read_small_file(g.gl_pathv[j], &len);

			if (text && container__parse_oci(text, len, c) == 0)
				found = 1;
			else if (text)
				log_debug("%s: not a JSON object", g.gl_pathv[j]);
			free(text);
		}
		globfree(&g);
		if (found) {
			log_debug("container %.12s: pod %s/%s", c->id,
				  c->ns[0] ? c->ns : "-", c->pod[0] ? c->pod : "-");
			return;
		}
	}
	log_debug("container %.12s: no bundle found", c->id);
}

const struct container *containers__get(struct containers *cs,
					const char *cgroups)
{
	struct container parsed, *c;
	uint64_t key, *v;

	if (!container__parse_cgroups(cgroups, &parsed))
		return NULL;
	/* Entries live as long as the cache (procs point at them): a hash
	 * shared by two ids takes the next free key. */
	for (key = fnv1a(parsed.id, strlen(parsed.id));
	     (v = hashmap__find(cs->byid, key)); key++) {
		c = (struct container *)(uintptr_t)*v;
		if (strcmp(c->id, parsed.id) == 0)
			return c;
	}
	c = xmalloc(sizeof(*c));
	*c = parsed;
	containers__read_bundle(cs, c);
	hashmap__set(cs->byid, key, (uintptr_t)c);
	return c;
}

const struct container *containers__of_pid(struct containers *cs,
					   uint32_t pid, bool *readable)
{
	char text[4096];

	*readable = procinfo__cgroups(pid, text, sizeof(text)) == 0;
	return *readable ? containers__get(cs, text) : NULL;
}

void containers__free(struct containers *cs)
{
	uint64_t key, value;
	size_t pos = 0;

	if (!cs)
		return;
	while (hashmap__next(cs->byid, &pos, &key, &value))
		free((void *)(uintptr_t)value);
	hashmap__free(cs->byid);
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
