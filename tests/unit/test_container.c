// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Containers and pods from fixture cgroup texts and OCI bundles. */
#include <stdlib.h>
#include <sys/stat.h>

#include "lib/hashmap.h"
#include "provider/container.h"
#include "provider/procinfo.h"
#include "unit.h"

#define ID "4f1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f30211a2b3c4d5e6f70819"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID3 "3333333333333333333333333333333333333333333333333333333333333333"
#define ID4 "4444444444444444444444444444444444444444444444444444444444444444"
#define UID "0c9e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

static const char *id_of(const char *text)
{
	static struct container c;

	return container__parse_cgroups(text, &c) ? c.id : "(none)";
}

static const char *uid_of(const char *text)
{
	static struct container c;

	return container__parse_cgroups(text, &c) ? c.pod_uid : "(none)";
}

static void test_cgroup_texts(void)
{
	/* hybrid (this kind of host): v2 says "/", v1 hierarchies name it */
	CHECK_STR(id_of("12:memory:/libpod_parent/libpod-" ID "\n"
			"1:name=systemd:/libpod_parent/libpod-" ID "\n0::/\n"),
		  ID);
	/* v2 only, systemd driver */
	CHECK_STR(id_of("0::/machine.slice/libpod-" ID ".scope/container\n"),
		  ID);
	CHECK_STR(id_of("0::/system.slice/docker-" ID ".scope\n"), ID);
	/* conmon sits beside its container: not in it */
	CHECK_STR(id_of("0::/libpod_parent/libpod-conmon-" ID "\n"), "(none)");
	CHECK_STR(id_of("0::/user.slice/user-1000.slice/session-2.scope\n"),
		  "(none)");
	CHECK_STR(
		id_of("4:memory:/process_api/16909df5ec93e97f5142c591d543a735\n"
		      "0::/\n"),
		"(none)");
	CHECK_STR(id_of(""), "(none)");
	/* Kubernetes: the pod uid from the kubepods path, both drivers */
	CHECK_STR(
		uid_of("0::/kubepods.slice/kubepods-burstable.slice/"
		       "kubepods-burstable-pod0c9e1a2b_3c4d_4e5f_8a9b_0c1d2e3f4a5b"
		       ".slice/cri-containerd-" ID ".scope\n"),
		UID);
	CHECK_STR(uid_of("3:cpu:/kubepods/besteffort/pod" UID "/" ID "\n"),
		  UID);
	CHECK_STR(uid_of("0::/kubepods/pod" UID "/crio-" ID "\n"), UID);
	CHECK_STR(uid_of("0::/system.slice/docker-" ID ".scope\n"), "");
	/* not a uid: too short */
	CHECK_STR(uid_of("0::/kubepods/podabc/" ID "\n"), "");
}

static const char containerd_spec[] =
	"{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"nginx\"]},"
	"\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	"\"io.kubernetes.cri.container-name\":\"web\","
	"\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f8-abcde\","
	"\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
	"\"io.kubernetes.cri.sandbox-uid\":\"" UID "\"}}";

static const char crio_spec[] =
	"{\"annotations\":{\"io.kubernetes.pod.name\":\"cart-0\","
	"\"io.kubernetes.pod.namespace\":\"store\","
	"\"io.kubernetes.pod.uid\":\"" UID "\","
	"\"io.kubernetes.container.name\":\"cart\"}}";

static int oci(const char *text, struct container *c)
{
	return container__parse_oci(text, strlen(text), c);
}

static void test_oci(void)
{
	struct container c = { 0 };

	CHECK(container__parse_oci(containerd_spec, sizeof(containerd_spec) - 1,
				   &c) == 0);
	CHECK_STR(c.pod, "shop-7d9f8-abcde");
	CHECK_STR(c.ns, "shop");
	CHECK_STR(c.pod_uid, UID);
	CHECK_STR(c.name, "web");

	memset(&c, 0, sizeof(c));
	CHECK(container__parse_oci(crio_spec, sizeof(crio_spec) - 1, &c) == 0);
	CHECK_STR(c.pod, "cart-0");
	CHECK_STR(c.ns, "store");
	CHECK_STR(c.name, "cart");

	/* a plain container: no pod */
	memset(&c, 0, sizeof(c));
	CHECK(oci("{\"annotations\":{\"a\":\"b\"}}", &c) == 0);
	CHECK_STR(c.pod, "");
	CHECK(oci("{}", &c) == 0);
	CHECK(oci("{\"annotations\":", &c) == -1);
	/* an annotation of the wrong type is ignored */
	CHECK(oci("{\"annotations\":{\"io.kubernetes.pod.name\":7}}", &c) == 0);
	CHECK_STR(c.pod, "");
}

static const char crio_sandbox[] =
	"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
	"\"io.kubernetes.pod.name\":\"cart-0\","
	"\"io.kubernetes.cri-o.Labels\":"
	"\"{\\\"app\\\":\\\"cart\\\",\\\"tier\\\":\\\"web\\\"}\"}}";

static void test_labels(void)
{
	char v[64];
	struct container c = { 0 }, app = { 0 };

	CHECK(oci(crio_sandbox, &c) == 0);
	CHECK(c.is_sandbox);
	CHECK(container__label(&c, "app", v, sizeof(v)));
	CHECK_STR(v, "cart");
	CHECK(container__label(&c, "tier", v, sizeof(v)));
	CHECK_STR(v, "web");
	CHECK(!container__label(&c, "version", v, sizeof(v)));
	CHECK(!container__label(&c, "app", v, 4)); /* does not fit */
	container__clear(&c);
	CHECK(!container__label(&c, "app", v, sizeof(v)));
	/* an app container names its sandbox; its own Labels are not the
	 * pod's */
	CHECK(oci("{\"annotations\":{\"io.kubernetes.cri-o.SandboxID\":\"" ID
		  "\","
		  "\"io.kubernetes.cri-o.Labels\":\"{}\"}}",
		  &app) == 0);
	CHECK(!app.is_sandbox);
	CHECK_STR(app.sandbox, ID);
	CHECK(app.labels == NULL);
	CHECK(!container__label(NULL, "app", v, sizeof(v)));
}

static void test_selector(void)
{
	struct container c = { .id = ID,
			       .pod = "shop-7d9f8-abcde",
			       .ns = "shop" };
	struct container bare = { .id = ID };

	CHECK(container__k8s_matches(&c, "shop", ""));
	CHECK(container__k8s_matches(&c, "shop", "shop-*"));
	CHECK(container__k8s_matches(&c, "", "shop-7d9f8-*"));
	CHECK(!container__k8s_matches(&c, "store", ""));
	CHECK(!container__k8s_matches(&c, "shop", "cart-*"));
	CHECK(!container__k8s_matches(&bare, "", "*"));
	CHECK(!container__k8s_matches(NULL, "shop", ""));
}

static void mkdirs(const char *root, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(path, 0755);
			*s = '/';
		}
	mkdir(path, 0755);
}

static void write_at(const char *root, const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		exit(2);
	fputs(text, f);
	fclose(f);
}

/* A fake host root with a containerd bundle: the cache finds the pod. */
static void test_cache(void)
{
	char root[] = "/tmp/kmt-container-XXXXXX", cmd[128];
	const struct container *c, *again, *other;
	char label[64] = "";
	struct containers *cs;

	if (!mkdtemp(root))
		exit(2);
	mkdirs(root, "run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID);
	write_at(root,
		 "run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID
		 "/config.json",
		 containerd_spec);
	mkdirs(root,
	       "run/containers/storage/overlay-containers/" ID2 "/userdata");
	write_at(root,
		 "run/containers/storage/overlay-containers/" ID2
		 "/userdata/config.json",
		 "not json");
	/* CRI-O: an app container and its pod's sandbox */
	mkdirs(root,
	       "run/containers/storage/overlay-containers/" ID3 "/userdata");
	write_at(root,
		 "run/containers/storage/overlay-containers/" ID3
		 "/userdata/config.json",
		 crio_sandbox);
	mkdirs(root,
	       "run/containers/storage/overlay-containers/" ID4 "/userdata");
	write_at(root,
		 "run/containers/storage/overlay-containers/" ID4
		 "/userdata/config.json",
		 "{\"annotations\":{\"io.kubernetes.cri-o.SandboxID\":\"" ID3
		 "\","
		 "\"io.kubernetes.pod.name\":\"cart-0\"}}");
	cs = containers__new(root);
	c = containers__get(cs,
			    "0::/kubepods.slice/cri-containerd-" ID ".scope\n");
	CHECK(c != NULL);
	if (c) {
		CHECK_STR(c->id, ID);
		CHECK_STR(c->pod, "shop-7d9f8-abcde");
		CHECK_STR(c->ns, "shop");
	}
	again = containers__get(cs, "1:cpu:/kubepods/" ID "\n");
	CHECK(again == c); /* read once */
	/* a bundle that is no JSON: the id, no pod */
	other = containers__get(cs, "0::/crio-" ID2 ".scope\n");
	CHECK(other != NULL && other != c);
	if (other)
		CHECK_STR(other->pod, "");
	CHECK(containers__get(cs, "0::/\n") == NULL);
	/* a sweep keeps the containers still in use, and only those */
	{
		struct hashmap *keep = hashmap__new();
		const struct container *c2;

		hashmap__set(keep, (uintptr_t)c, 1);
		CHECK(containers__count(cs) == 2);
		containers__sweep(cs, keep);
		CHECK(containers__count(cs) == 1);
		c2 = containers__get(cs, "0::/kubepods/cri-containerd-" ID
					 ".scope\n");
		CHECK(c2 == c);
		CHECK(containers__count(cs) == 1);
		hashmap__free(keep);
	}
	other = containers__get(cs, "0::/kubepods/crio-" ID4 "\n");
	CHECK(other && container__label(other, "app", label, sizeof(label)));
	CHECK_STR(label, "cart");
	containers__free(cs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_cgroup_texts();
	test_oci();
	test_labels();
	test_selector();
	test_cache();
	CHECK(strcmp(cgroup__mode(), "v1") == 0 ||
	      strcmp(cgroup__mode(), "v2") == 0 ||
	      strcmp(cgroup__mode(), "hybrid") == 0);
	return unit_done("container");
}
