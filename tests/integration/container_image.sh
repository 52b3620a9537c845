#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: runs container_daemonset; may remove the kmond base image
# The image as shipped: `make image` builds the Containerfile (on a Debian
# base made from Debian's packages), ldd finds every library kmond links
# inside it, and container_daemonset.sh runs it as the DaemonSet does
# (its securityContext, capabilities and mounts read from
# deploy/kubernetes): a workload container's records carry its container
# and pod, out of the file sink.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/container.sh"

container_ready
IMAGE=localhost/kmt-kmond-image:$$
CTR_IMAGES+=("$IMAGE")
# the Debian base, made by make image unless it was there: removed after
BASE=localhost/kmond-base:bookworm
"${PODMAN[@]}" image exists $BASE || CTR_IMAGES+=($BASE)
# KMT_IMAGE_MADE=NAME: an image `make image` made from this tree earlier
# in the same run (.ci/run makes it beside the suite under ASan, where
# the build's two minutes cost the run nothing); its log is
# KMT_IMAGE_MADE_LOG. Without it, or when it is not there, made here.
if [ -n "${KMT_IMAGE_MADE:-}" ] && "${PODMAN[@]}" image exists "$KMT_IMAGE_MADE"; then
	"${PODMAN[@]}" tag "$KMT_IMAGE_MADE" "$IMAGE" || fail "podman tag $KMT_IMAGE_MADE"
	cp "${KMT_IMAGE_MADE_LOG:-/dev/null}" "$WORK/image.log"
	echo "make image, earlier in this run: $KMT_IMAGE_MADE"
else
	make -s --no-print-directory image IMAGE="$IMAGE" >"$WORK/image.log" 2>&1 ||
		fail "make image: $(tail -5 "$WORK/image.log")"
fi
cat "$WORK/image.log"
"${PODMAN[@]}" run --rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
	--entrypoint /usr/bin/ldd "$IMAGE" /usr/sbin/kmond >"$WORK/ldd" 2>&1 ||
	fail "ldd in the image: $(cat "$WORK/ldd")"
grep -q 'not found' "$WORK/ldd" && fail "libraries missing in the image: $(grep 'not found' "$WORK/ldd")"
echo "ok: ldd finds the $(grep -c '=>' "$WORK/ldd") libraries kmond links"
KMOND_IMAGE=$IMAGE bash "$(dirname "$0")/container_daemonset.sh" ||
	fail "the image does not run as the DaemonSet runs it"
echo "ok: the image runs as the DaemonSet runs it"
