#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: k8s namespace kmt-batch, which its v2 run shares
# A process in a real container (podman + runc) blocking in a known
# function: its offcpu stack has user frames symbolized from the
# container's own binary (/app/kmt_inside exists only in the container's
# root, read through /proc/PID/root), and the records carry its container
# and pod.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"

container_ready
tag=$$
BLOCKS=40

[ -e /app/kmt_inside ] && fail "/app/kmt_inside exists on the host"
rootfs_add "$WORK/root" "$BUILD/tests/kmt_offcpu" /app/kmt_inside
rootfs_add "$WORK/root" /bin/busybox /bin/busybox
mkdir "$WORK/go"
container_image "localhost/kmt-offcpu-$tag" "$WORK/root"

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: sleeper, match: { k8s: { namespace: kmt-batch } } }
collectors:
  offcpu: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
# It waits for the test to have seen it start (a loaded host can take
# longer to answer podman inspect than the helper takes to finish).
container_run kmtc-off-$tag --network none -v "$WORK/go:/go" \
	--annotation io.kubernetes.pod.name=sleeper-0 \
	--annotation io.kubernetes.pod.namespace=kmt-batch \
	"localhost/kmt-offcpu-$tag" /bin/busybox sh -c \
	"while [ ! -e /go/now ]; do /bin/busybox usleep 20000; done; /app/kmt_inside 20 $BLOCKS; true"
ID=$CTR_ID
# once kmond has placed the container's first process in the service, its
# children are in it from their fork
wait_for_log "service none -> sleeper" 10 || fail "the container was not selected"
touch "$WORK/go/now"
"${PODMAN[@]}" wait kmtc-off-$tag >/dev/null || fail "podman wait"
sleep 0.8
stop_kmond

python3 - "$WORK/out.json" "$ID" $BLOCKS <<'PY' || fail "offcpu records"
import json, os, sys
path, cid, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
mine = [r for r in recs if r["kind"] == "offcpu" and r["service"] == "sleeper"]
if not mine:
    sys.exit("no offcpu record for the containerised helper")
ids = {(r.get("container"), r.get("namespace"), r.get("pod")) for r in mine}
if ids != {(cid, "kmt-batch", "sleeper-0")}:
    sys.exit(f"container and pod: {ids}")
# Blocks of at least 20 ms (a loaded host wakes them late, never early).
hits = [r for r in mine if any(f.startswith("kmt_offcpu_block+0x") for f in r["stack"])
        and 20e6 <= r["total_ns"] / r["count"] < 200e6]
blocks = sum(r["count"] for r in hits)
if not want - 2 <= blocks <= want:
    sys.exit(f"{blocks} 20 ms blocks in kmt_offcpu_block, want {want}: "
             f"{[(r['count'], r['total_ns'], r['stack'][-3:]) for r in mine]}")
st = hits[0]["stack"]
i = next(i for i, f in enumerate(st) if f.startswith("kmt_offcpu_block"))
if not st[i - 1].startswith(os.environ["SYSCALL_ENTRY_FRAME"]):
    sys.exit(f"kmt_offcpu_block is not the innermost user frame: {st}")
print(f"ok: {blocks} blocks in kmt_offcpu_block, container {cid[:12]}: {st[i:]}")
PY
