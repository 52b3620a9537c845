#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# name_from_label: a service entry named by a pod label. Real containers
# (podman + runc) annotated as CRI-O annotates a pod: a sandbox carrying
# the pod's labels, and an app container naming its sandbox. The app's
# process is counted under the label's value; a pod without the label
# keeps the entry's name. (podman reads --annotation as CSV: the JSON is
# quoted as a CSV field.)
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"

container_ready
tag=$$
N=2345
M=1234

rootfs_add "$WORK/root" "$BUILD/tests/kmt_getppid" /kmt_getppid
rootfs_add "$WORK/root" /bin/busybox /bin/busybox
container_image "localhost/kmt-label-$tag" "$WORK/root"
mkdir "$WORK/go"

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: shop
    name_from_label: app
    match: { k8s: { namespace: kmt-label } }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
start_kmond "$WORK/kmond.yaml" -v

pod=(--annotation io.kubernetes.pod.namespace=kmt-label)
container_run kmtc-sandbox-$tag --network none "${pod[@]}" \
	--annotation io.kubernetes.pod.name=cart-0 \
	--annotation io.kubernetes.cri-o.ContainerType=sandbox \
	--annotation '"io.kubernetes.cri-o.Labels={""app"":""cart"",""tier"":""web""}"' \
	"localhost/kmt-label-$tag" /bin/busybox sleep 60
SANDBOX=$CTR_ID
# app NAME POD N [ARGS]: a container of pod POD calling getppid N times
app() {
	local name=$1 podname=$2 n=$3
	shift 3
	container_run $name --network none -v "$WORK/go:/go" "${pod[@]}" \
		--annotation io.kubernetes.pod.name=$podname \
		--annotation io.kubernetes.cri-o.ContainerType=container "$@" \
		"localhost/kmt-label-$tag" /bin/busybox sh -c \
		"/kmt_getppid $n --wait /go/now; true"
}
app kmtc-cart-$tag cart-0 $N --annotation io.kubernetes.cri-o.SandboxID=$SANDBOX
CART=$CTR_ID
app kmtc-plain-$tag plain-0 $M
PLAIN=$CTR_ID
# children are in the service once their parent is
wait_for_log "service none -> cart" 10 || fail "the labelled pod was not selected"
wait_for_log "service none -> shop" 10 || fail "the other pod was not selected"
touch "$WORK/go/now"
"${PODMAN[@]}" wait kmtc-cart-$tag kmtc-plain-$tag >/dev/null
sleep 0.8
stop_kmond

out=$WORK/out.json
expect_eq "getppid of the pod labelled app=cart, as service cart" \
	"$($RECORDS "$out" --kind syscall --where comm=kmt_getppid --where container=$CART --where service=cart --sum count)" $N
expect_eq "getppid of the pod without the label, as service shop" \
	"$($RECORDS "$out" --kind syscall --where comm=kmt_getppid --where container=$PLAIN --where service=shop --sum count)" $M
