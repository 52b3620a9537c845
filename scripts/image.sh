#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Builds kmond's image from the Containerfile with podman (`make image`).
# No registry is reachable here, so the Debian base is made from Debian's
# packages (mmdebstrap, minbase) and imported as a local image, once; the
# Containerfile takes it as its base (build argument DEBIAN, whose default
# is the public debian:bookworm-slim).
#   scripts/image.sh [IMAGE]     (as root; IMAGE: localhost/kmond:latest)
#   scripts/image.sh --base      the Debian base alone (CI makes it
#                                beside the suites, before the tests
#                                that build the image)
#   KMOND_BASE=NAME              a base image to use as it is
set -euo pipefail
cd "$(dirname "$0")/.."
base_only=0
[ "${1:-}" = --base ] && { base_only=1; shift; }
IMAGE=${1:-localhost/kmond:latest}
BASE=${KMOND_BASE:-localhost/kmond-base:bookworm}
# runc sets the rlimits of a container's first process from outside; raising
# one needs CAP_SYS_RESOURCE, which some hosts lack: ask for less.
PODMAN=(podman --cgroup-manager=cgroupfs --runtime runc --events-backend file)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

command -v podman >/dev/null || scripts/install-deps.sh image
if ! "${PODMAN[@]}" image exists "$BASE"; then
	[ -n "${KMOND_BASE:-}" ] && { echo "image.sh: no image $BASE" >&2; exit 1; }
	tmp=$(mktemp -d /tmp/kmond-base.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	echo "  BASE     $BASE (mmdebstrap bookworm, minbase)"
	scripts/debian-rootfs.sh "$tmp/base.tar"
	"${PODMAN[@]}" import -q "$tmp/base.tar" "$BASE" >/dev/null
fi
[ $base_only = 1 ] && exit 0
echo "  IMAGE    $IMAGE"
"${PODMAN[@]}" build -q "${LIMITS[@]}" --layers=false \
	--build-arg DEBIAN="$BASE" -t "$IMAGE" -f Containerfile . >/dev/null
# the build stage's image (compilers, sources) is not kept
"${PODMAN[@]}" image prune -f --filter label=kmond.stage=build >/dev/null
"${PODMAN[@]}" image inspect -f '{{.Size}}' "$IMAGE" |
	awk -v i="$IMAGE" '{ printf "  SIZE     %s: %.1f MB\n", i, $1 / 1e6 }'
