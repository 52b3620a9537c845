#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact count of comm kmt_getppid, which other tests run
# deploy/kubernetes without a cluster: the ConfigMap's kmond.yaml passes
# `kmond --check`, and kmond runs in a real container (podman + runc) as
# the DaemonSet runs it: host pid and network namespaces, the DaemonSet's
# capabilities (dropped ALL, added its list) and hostPath mounts, read-only
# root, no privilege escalation, its args. In there it counts a host
# process exactly and a process of an annotated container exactly, named
# with its pod (read from the runtime's bundle through /proc/1/root), and
# its own capabilities are the DaemonSet's at most. (The helper is a child
# of the container's first process: that one is runc's init until its
# exec, and its own getppid calls count too.)
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"

container_ready
tag=$$
HOST_N=1234
POD_N=4321
DEPLOY=deploy/kubernetes

# The manifests, read as the API server would decode them.
python3 - "$DEPLOY" "$WORK" <<'PY' || fail "manifests"
import json, os, sys, yaml
deploy, work = sys.argv[1:]
docs = []
for f in sorted(os.listdir(deploy)):
    for d in yaml.safe_load_all(open(os.path.join(deploy, f))):
        if d:
            docs.append((f, d))
kinds = {d["kind"]: d for f, d in docs}
want = {"Namespace": "v1", "ServiceAccount": "v1", "ConfigMap": "v1",
        "DaemonSet": "apps/v1"}
for kind, api in want.items():
    if kind not in kinds or kinds[kind]["apiVersion"] != api:
        sys.exit(f"no {kind} of {api}")
for f, d in docs:
    if d["kind"] != "Namespace" and d["metadata"].get("namespace") != "kmon":
        sys.exit(f"{f}: {d['kind']} not in namespace kmon")
ds = kinds["DaemonSet"]["spec"]
if ds["selector"]["matchLabels"].items() > ds["template"]["metadata"]["labels"].items():
    sys.exit("the selector does not match the template's labels")
pod = ds["template"]["spec"]
if not (pod.get("hostPID") and pod.get("hostNetwork")):
    sys.exit("the DaemonSet needs hostPID and hostNetwork")
if pod["serviceAccountName"] != kinds["ServiceAccount"]["metadata"]["name"]:
    sys.exit("service account name")
(c,) = pod["containers"]
sc = c["securityContext"]
if sc["capabilities"]["drop"] != ["ALL"] or sc.get("privileged"):
    sys.exit("capabilities: drop ALL, not privileged")
vols = {v["name"]: v for v in pod["volumes"]}
mounts = []
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    if "hostPath" in v:
        mounts.append(f"{v['hostPath']['path']}:{m['mountPath']}" +
                      (":ro" if m.get("readOnly") else ""))
    elif v.get("configMap", {}).get("name") == kinds["ConfigMap"]["metadata"]["name"]:
        cm_mount = m["mountPath"]
    else:
        sys.exit(f"volume {m['name']}: neither hostPath nor the ConfigMap")
cm = kinds["ConfigMap"]["data"]
if set(cm) != {"kmond.yaml"}:
    sys.exit(f"ConfigMap keys {set(cm)}")
os.makedirs(f"{work}/cm")
open(f"{work}/cm/kmond.yaml", "w").write(cm["kmond.yaml"])
with open(f"{work}/ds.sh", "w") as out:
    out.write("CAPS=(%s)\n" % " ".join("--cap-add=" + x for x in sc["capabilities"]["add"]))
    out.write("CAPSET=(%s)\n" % " ".join(sc["capabilities"]["add"]))
    out.write("MOUNTS=(%s)\n" % " ".join("-v " + m for m in mounts))
    out.write(f"CM_MOUNT={cm_mount}\n")
    out.write("ARGS=(%s)\n" % " ".join(c["args"]))
    out.write("READONLY=%d\nNOESC=%d\n" % (bool(sc.get("readOnlyRootFilesystem")),
                                           not sc.get("allowPrivilegeEscalation", True)))
    out.write("SECCOMP=%s\n" % sc.get("seccompProfile", {}).get("type", "RuntimeDefault"))
print(f"ok: {len(docs)} manifests; caps {sc['capabilities']['add']}; mounts {mounts}")
PY
source "$WORK/ds.sh"
# kubectl, where there is one, decodes them offline into its own types
# (metadata at least) and knows every kind.
if command -v kubectl >/dev/null; then
	got=$(kubectl label --local -f "$DEPLOY" kmt=check -o name 2>&1 | sort | tr '\n' ' ')
	expect_eq "kubectl's offline reading" "$got" \
		"configmap/kmond daemonset.apps/kmond namespace/kmon serviceaccount/kmond "
else
	echo "no kubectl here: the manifests are read by the check above only"
fi
$KMOND -c "$WORK/cm/kmond.yaml" --check || fail "the ConfigMap's kmond.yaml"

# kmond's image: the binary and its libraries (the Containerfile builds
# the same from Debian packages; no registry here for its base image).
# KMOND_IMAGE=NAME runs an image built from the Containerfile instead.
IMAGE=${KMOND_IMAGE:-localhost/kmt-kmond-$tag}
if [ -z "${KMOND_IMAGE:-}" ]; then
	rootfs_add "$WORK/root" "$KMOND" /usr/sbin/kmond
	mkdir -p "$WORK/root/etc/kmond" "$WORK/root/tmp" "$WORK/root/proc" \
		"$WORK/root/sys"
	container_image "$IMAGE" "$WORK/root"
fi
rootfs_add "$WORK/app" "$BUILD/tests/kmt_getppid" /kmt_getppid
rootfs_add "$WORK/app" /bin/busybox /bin/busybox
container_image "localhost/kmt-app-$tag" "$WORK/app"

# The run's own config in the ConfigMap's place.
mkdir -p "$WORK/etc"
cat >"$WORK/etc/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: in-pod, match: { k8s: { namespace: kmt-ds } } }
  - { name: on-host, match: { comm: kmt_getppid } }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
exporters:
  - { type: file, path: "-" }
YAML
opts=(--pid host --network host --user 0 --cap-drop=all "${CAPS[@]}"
	"${MOUNTS[@]}" -v "$WORK/etc:$CM_MOUNT:ro")
[ "$READONLY" = 1 ] && opts+=(--read-only)
[ "$NOESC" = 1 ] && opts+=(--security-opt no-new-privileges)
[ "$SECCOMP" = Unconfined ] && opts+=(--security-opt seccomp=unconfined)
# the DaemonSet's args after the image's entrypoint
container_run kmtc-kmond-$tag "${opts[@]}" --entrypoint /usr/sbin/kmond \
	"$IMAGE" "${ARGS[@]}" -v
KPID=$CTR_PID
for ((i = 0; i < 100; i++)); do
	"${PODMAN[@]}" logs kmtc-kmond-$tag 2>&1 | grep -q "running on" && break
	kill -0 $KPID 2>/dev/null || break
	sleep 0.1
done
"${PODMAN[@]}" logs kmtc-kmond-$tag >"$WORK/kmond.out" 2>"$WORK/kmond.err"
grep -q "running on" "$WORK/kmond.err" || fail "kmond did not start in its container"
caps=$(awk '/^CapBnd/ { print $2 }' /proc/$KPID/status)

"$BUILD/tests/kmt_getppid" $HOST_N
mkdir "$WORK/go"
container_run kmtc-app-$tag --network none -v "$WORK/go:/go" \
	--annotation io.kubernetes.cri.sandbox-name=app-0 \
	--annotation io.kubernetes.cri.sandbox-namespace=kmt-ds \
	"localhost/kmt-app-$tag" /bin/busybox sh -c "/kmt_getppid $POD_N --wait /go/now; true"
APP_ID=$CTR_ID
# once kmond has placed the container's first process in the service, its
# children are in it from their fork
for ((i = 0; i < 100; i++)); do
	"${PODMAN[@]}" logs kmtc-kmond-$tag 2>&1 | grep -q -- "-> in-pod" && break
	sleep 0.1
done
touch "$WORK/go/now"
"${PODMAN[@]}" wait kmtc-app-$tag >/dev/null
sleep 1
"${PODMAN[@]}" stop -t 10 kmtc-kmond-$tag >/dev/null
rc=$("${PODMAN[@]}" inspect -f '{{.State.ExitCode}}' kmtc-kmond-$tag)
"${PODMAN[@]}" logs kmtc-kmond-$tag >"$WORK/kmond.out" 2>"$WORK/kmond.err"
grep '^{' "$WORK/kmond.out" >"$WORK/out.json"
expect_eq "kmond's exit code after SIGTERM in its container" "$rc" 0

python3 - "$caps" "${CAPSET[@]}" <<'PY' || fail "capabilities"
import sys
names = {"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "SYS_PTRACE": 19,
         "SYS_ADMIN": 21, "SYS_RESOURCE": 24, "SYSLOG": 34, "PERFMON": 38,
         "BPF": 39, "NET_ADMIN": 12}
have = int(sys.argv[1], 16)
allowed = sum(1 << names[c] for c in sys.argv[2:])
if have & ~allowed:
    sys.exit(f"kmond's bounding set {have:#x} exceeds the DaemonSet's {allowed:#x}")
print(f"ok: kmond's bounding set {have:#x} within the DaemonSet's {allowed:#x}")
PY
expect_eq "getppid of the host process" \
	"$($RECORDS "$WORK/out.json" --kind syscall --where service=on-host --sum count)" $HOST_N
expect_eq "getppid of the pod's process" \
	"$($RECORDS "$WORK/out.json" --kind syscall --where comm=kmt_getppid --where service=in-pod --where container=$APP_ID --where pod=app-0 --where namespace=kmt-ds --sum count)" $POD_N
