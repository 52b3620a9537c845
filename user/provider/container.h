/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which container, and which Kubernetes pod, a process runs in: the id
 * from its cgroup path (any hierarchy, so hybrid hosts whose v2 cgroup is
 * "/" work as v2-only ones do), the pod from the runtime's own metadata
 * on the host (the OCI bundle's config.json annotations the CRI runtimes
 * write), else the pod uid from the kubepods cgroup path. */
#ifndef KMON_CONTAINER_H
#define KMON_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap;

#define CONTAINER_ID_MAX 65 /* 64 hex digits */
#define CONTAINER_POD_MAX 254 /* a DNS subdomain: 253 bytes */
#define CONTAINER_NS_MAX 64 /* a DNS label: 63 bytes */
#define CONTAINER_UID_MAX 37 /* a UUID */

struct container {
	char id[CONTAINER_ID_MAX];
	/* "" when unknown: not in a pod, or its metadata unreadable */
	char pod[CONTAINER_POD_MAX];
	char ns[CONTAINER_NS_MAX];
	char pod_uid[CONTAINER_UID_MAX];
	char name[CONTAINER_POD_MAX]; /* the container's name in its pod */
	/* The pod's labels as a JSON object text (NULL: unknown). Only CRI-O
	 * writes them on the host: on its sandbox container, which the
	 * others name by id. */
	char *labels;
	char sandbox[CONTAINER_ID_MAX]; /* CRI-O: the pod's sandbox */
	bool is_sandbox;
};

/* The container id and pod uid in a /proc/PID/cgroup text. false: the
 * process is in no container. */
bool container__parse_cgroups(const char *text, struct container *c);
/* Pod name, namespace, uid and container name from the annotations of an
 * OCI runtime spec (config.json); fields it lacks are left as they are.
 * 0, or -1 when text is not a JSON object. */
int container__parse_oci(const char *text, size_t len, struct container *c);
/* The value of the pod's label key, copied into out; false when the pod
 * has no such label (or its labels are unknown) or it does not fit. */
bool container__label(const struct container *c, const char *key, char *out,
		      size_t len);
/* Frees what parse_oci allocated in c (its labels). */
void container__clear(struct container *c);

/* Whether c is in a pod of namespace ns ("": any) whose name matches
 * pod_glob ("": any). */
bool container__k8s_matches(const struct container *c, const char *ns,
			    const char *pod_glob);

/* The containers seen so far, each read once. */
struct containers;

/* Bundles are looked for under host_root; NULL: under kmond's own root,
 * else the host's as pid 1 (hostPID) or the container's runtime shim see
 * it, so kmond finds them from inside its own container too. */
struct containers *containers__new(const char *host_root);
/* The container of a process whose cgroup text is given, or NULL. The
 * pointer stays valid until containers__free. */
const struct container *containers__get(struct containers *cs,
					const char *cgroups);
/* Of pid, from /proc/PID/cgroup; NULL when in none or unreadable. */
const struct container *containers__of_pid(struct containers *cs, uint32_t pid,
					   bool *readable);
/* How many containers are known. */
size_t containers__count(const struct containers *cs);
/* Forgets every container not in keep (a set of container pointers as
 * u64 keys): those no process is in any more. */
void containers__sweep(struct containers *cs, const struct hashmap *keep);
void containers__free(struct containers *cs); /* NULL-safe */

/* The cgroup layout of this host: "v2" (unified only), "hybrid" (v1
 * controllers and a v2 hierarchy), "v1" (legacy only). */
const char *cgroup__mode(void);

#endif
