#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The demo application's image, made from Debian's packages alone (no
# registry is reachable): mmdebstrap (minbase) with nginx, Redis,
# memcached, PostgreSQL and Python 3 (and Debian's psycopg2), imported
# into podman once. Every tier runs from it, each in its own container;
# the tiers' code is mounted from demo/app, so editing it needs no build.
#   demo/image.sh [IMAGE]       (as root; IMAGE: localhost/kmon-demo:bookworm)
set -euo pipefail
IMAGE=${1:-localhost/kmon-demo:bookworm}
PODMAN=(podman --cgroup-manager=cgroupfs --runtime runc --events-backend file)

"${PODMAN[@]}" image exists "$IMAGE" && exit 0
tmp=$(mktemp -d /tmp/kmon-demo-image.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "  IMAGE    $IMAGE (mmdebstrap bookworm: nginx, redis, memcached, postgresql, python3)"
"$(dirname "$0")/../scripts/debian-rootfs.sh" "$tmp/rootfs.tar" \
	nginx-light,redis-server,memcached,postgresql-15,python3,python3-psycopg2
"${PODMAN[@]}" import -q "$tmp/rootfs.tar" "$IMAGE" >/dev/null
"${PODMAN[@]}" image inspect -f '{{.Size}}' "$IMAGE" |
	awk -v i="$IMAGE" '{ printf "  SIZE     %s: %.1f MB\n", i, $1 / 1e6 }'
