#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Block I/O of a process in a real container (podman + runc): dd writes
# 16 MiB with O_DIRECT to a directory of the host's disk mounted in the
# container; its bio records add up to 16 MiB of writes on that disk and
# carry its container and pod.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"

container_ready
tag=$$
MIB=$((1024 * 1024))
disk=$(lsblk -no PKNAME "$(df --output=source "$WORK" | tail -1)" 2>/dev/null)
[ -n "$disk" ] || disk=$(basename "$(df --output=source "$WORK" | tail -1)")

rootfs_add "$WORK/root" /bin/busybox /bin/busybox
container_image "localhost/kmt-bio-$tag" "$WORK/root"
mkdir "$WORK/go" "$WORK/data"

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: writer, match: { k8s: { namespace: kmt-io } } }
collectors:
  bio: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
container_run kmtc-bio-$tag --network none -v "$WORK/go:/go" \
	-v "$WORK/data:/data" \
	--annotation io.kubernetes.cri.sandbox-name=writer-0 \
	--annotation io.kubernetes.cri.sandbox-namespace=kmt-io \
	"localhost/kmt-bio-$tag" /bin/busybox sh -c \
	"while [ ! -e /go/now ]; do /bin/busybox usleep 20000; done; /bin/busybox dd if=/dev/zero of=/data/file bs=1M count=16 oflag=direct; true"
ID=$CTR_ID
wait_for_log "service none -> writer" 10 || fail "the container was not selected"
touch "$WORK/go/now"
"${PODMAN[@]}" wait kmtc-bio-$tag >/dev/null
sleep 0.8
stop_kmond

# An I/O short of 16 MiB must be counted in bio's lost (bio_short.py).
PYTHONPATH=$(dirname "$0")/../lib python3 - "$WORK/out.json" "$ID" "$disk" $((16 * MIB)) <<'PY' || fail "bio records"
import json, sys
from bio_short import fits, lost_ios, short_mib
path, cid, disk, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
recs = [json.loads(l) for l in open(path)]
mine = [r for r in recs if r["kind"] == "bio" and r.get("container") == cid
        and r["op"] == "write" and r["disk"] == disk]
lost = lost_ios(recs)
nbytes = sum(r["bytes"] for r in mine)
short = short_mib(nbytes, want)
if not fits(nbytes, want, lost, slack=0.02):
    sys.exit(f"{nbytes} bytes written by the container on {disk}, want {want}"
             f" ({short} MiB short, {lost} I/Os lost)")
if lost:
    print(f"note: {lost} I/Os lost (counted), {short} MiB short")
names = {(r["comm"], r["service"], r.get("namespace"), r.get("pod")) for r in mine}
if names != {("busybox", "writer", "kmt-io", "writer-0")}:
    sys.exit(f"names: {names}")
print(f"ok: {nbytes} bytes written on {disk} by container {cid[:12]}: {names}")
PY
