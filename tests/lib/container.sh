# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Real containers for the tests: podman with runc and the cgroupfs manager
# (crun refuses hybrid cgroup hosts; cgroupfs needs no systemd), images
# imported from a directory (no registry is reachable), each container in
# a network namespace the test made. Sourced after kmond.sh; everything
# made here is removed at exit.
#   container_ready                 skips the test (exit 77, says why) when
#                                   podman cannot run a container here
#   rootfs_add DIR FILE [AS]        copies FILE (and the libraries it
#                                   loads) into DIR, at AS (default FILE)
#   container_image NAME DIR        imports DIR as image NAME
#   container_netns NAME ADDR PEER  a netns NAME (ADDR/30 on eth0), its
#                                   other end in netns NAME-c at PEER
#   container_run NAME ARGS...      podman run -d --name NAME ARGS; sets
#                                   CTR_ID and CTR_PID
# CONTAINER_CGROUP=v2 runs podman in a mount namespace where
# /sys/fs/cgroup is the cgroup2 hierarchy alone: on a hybrid host its
# containers are where a v2-only host puts them (the path in the "0::"
# line only), which container_run checks. CONTAINER_CGROUP=v1 hides the
# v2 hierarchy of a hybrid host instead: the path is in the v1 lines only
# and the "0::" line says "/", as on hybrid hosts whose runtime ignores v2
# (on a v2-only host, in a v1 layout made for podman alone).

CONTAINER_CGROUP=${CONTAINER_CGROUP:-host}
# cgroup2fs on a v2-only host (a qemu guest)
CGROUP_ROOT_FS=$(stat -fc %T /sys/fs/cgroup)

PODMAN=(podman --cgroup-manager=cgroupfs --runtime runc --events-backend file)
CTR_RUN_ARGS=()
if [ "$CONTAINER_CGROUP" = v2 ]; then
	# a v2-only host (a qemu guest) has that layout already
	[ "$CGROUP_ROOT_FS" = cgroup2fs ] ||
		PODMAN=(unshare -m --propagation private sh -c \
			'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh "${PODMAN[@]}")
	# no pids controller in a v2 hierarchy whose controllers v1 holds
	CTR_RUN_ARGS=(--pids-limit -1)
elif [ "$CONTAINER_CGROUP" = v1 ] && mountpoint -q /sys/fs/cgroup/unified; then
	PODMAN=(unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified && exec "$@"' sh "${PODMAN[@]}")
elif [ "$CONTAINER_CGROUP" = v1 ] && [ "$CGROUP_ROOT_FS" = cgroup2fs ]; then
	# A v2-only host (a qemu guest): a v1 layout of systemd's named
	# hierarchy and the devices controller (runc needs it), which has no
	# v2 counterpart: no controller is taken from the v2 hierarchy, and
	# the v1 ones are gone with their last mount and cgroup.
	PODMAN=(unshare -m --propagation private sh -c \
		'mount -t tmpfs -o mode=755 none /sys/fs/cgroup &&
		mkdir /sys/fs/cgroup/systemd /sys/fs/cgroup/devices &&
		mount -t cgroup -o none,name=systemd none /sys/fs/cgroup/systemd &&
		mount -t cgroup -o devices none /sys/fs/cgroup/devices &&
		exec "$@"' sh "${PODMAN[@]}")
fi
CTR_NAMES=()
CTR_IMAGES=()
CTR_NETNS=()

container_cleanup() {
	local n
	for n in "${CTR_NAMES[@]}"; do
		"${PODMAN[@]}" rm -f -t 0 "$n" >/dev/null 2>&1
	done
	for n in "${CTR_IMAGES[@]}"; do
		"${PODMAN[@]}" rmi -f "$n" >/dev/null 2>&1
	done
	for n in "${CTR_NETNS[@]}"; do
		ip netns del "$n" 2>/dev/null
		ip netns del "$n-c" 2>/dev/null
	done
	cleanup
}
trap container_cleanup EXIT

container_ready() {
	local why=
	command -v podman >/dev/null || why="podman is not installed"
	[ -z "$why" ] && ! command -v runc >/dev/null && why="runc is not installed"
	[ -z "$why" ] && [ "$CONTAINER_CGROUP" = v2 ] &&
		! grep -q cgroup2 /proc/filesystems && why="no cgroup2 here"
	[ -z "$why" ] && ! "${PODMAN[@]}" info >/dev/null 2>"$WORK/podman.err" &&
		why="podman info failed: $(head -1 "$WORK/podman.err")"
	[ -z "$why" ] || skip "$why"
}

rootfs_add() {
	local dir=$1 file=$2 as=${3:-$2} lib
	mkdir -p "$dir/$(dirname "$as")"
	cp -L "$file" "$dir/$as" || fail "cannot copy $file"
	for lib in $(ldd "$file" 2>/dev/null | grep -o '/[^ ]*'); do
		mkdir -p "$dir/$(dirname "$lib")"
		cp -L "$lib" "$dir/$lib"
	done
}

container_image() {
	CTR_IMAGES+=("$1")
	tar -C "$2" -c . | "${PODMAN[@]}" import -q - "$1" >/dev/null ||
		fail "podman import $1 failed"
}

container_netns() {
	local ns=$1
	CTR_NETNS+=("$ns")
	ip netns add "$ns" && ip netns add "$ns-c" ||
		fail "cannot create netns $ns"
	ip -n "$ns" link add eth0 type veth peer name eth0 netns "$ns-c" &&
		ip -n "$ns" addr add "$2/30" dev eth0 &&
		ip -n "$ns-c" addr add "$3/30" dev eth0 &&
		ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up &&
		ip -n "$ns-c" link set eth0 up && ip -n "$ns-c" link set lo up ||
		fail "cannot wire $ns"
}

container_run() {
	local name=$1
	shift
	CTR_NAMES+=("$name")
	# runc sets the rlimits of the container's first process from
	# outside (prlimit); raising one needs CAP_SYS_RESOURCE, which some
	# hosts (this CI's sandbox) lack, and podman's defaults raise
	# nofile and nproc: ask for less than the host's.
	"${PODMAN[@]}" run -d --name "$name" --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 "${CTR_RUN_ARGS[@]}" "$@" >"$WORK/podman.out" \
		2>"$WORK/podman.err" ||
		fail "podman run $name: $(tail -1 "$WORK/podman.err")"
	CTR_ID=$("${PODMAN[@]}" inspect -f '{{.Id}}' "$name")
	CTR_PID=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$name")
	[ -n "$CTR_ID" ] && [ "${CTR_PID:-0}" -gt 0 ] ||
		fail "podman run $name: not running: $("${PODMAN[@]}" logs "$name" 2>&1 | tail -5)"
	container_cgroup_check
}

# Says where the container's cgroup path is, and that it is where the
# mode puts it.
container_cgroup_check() {
	local v1 v2 text
	# a short-lived container may be gone already
	text=$(cat "/proc/$CTR_PID/cgroup" 2>/dev/null) || return 0
	v1=$(grep -v '^0::' <<<"$text" | grep -c "$CTR_ID")
	v2=$(grep '^0::' <<<"$text" | grep -c "$CTR_ID")
	echo "container ${CTR_ID:0:12}: cgroup path in $v1 v1 and $v2 v2 lines (mode $CONTAINER_CGROUP)"
	if [ "$CONTAINER_CGROUP" = v2 ] && [ "$v1" -ne 0 -o "$v2" -ne 1 ]; then
		fail "not a v2-only layout: $(cat "/proc/$CTR_PID/cgroup")"
	fi
	if [ "$CONTAINER_CGROUP" = v1 ] && [ "$v1" -eq 0 -o "$v2" -ne 0 ]; then
		fail "not a v1-only layout: $(cat "/proc/$CTR_PID/cgroup")"
	fi
}
