# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Processes capped at a share of the CPU, each in a cgroup of its own
# (CFS quota), as if on a machine that small: a reader slower than its
# stream, a member of a group with a core's share of its own. cgroup
# v1's cpu hierarchy where it is mounted, else v2's cpu.max.
#   cpu_cap_ready        0 once the cgroups can be made (CPU_CAP_ROOT set)
#   cpu_capped NAME CORES CMD...   (in the background: `cpu_capped ... &`)
#                        CMD in cgroup NAME, capped at CORES (like 0.3)
#   cpu_cap_gone         the cgroups removed (their processes ended)

cpu_cap_ready() {
	local v1=/sys/fs/cgroup/cpu
	[ -n "${CPU_CAP_ROOT:-}" ] && return 0
	if [ -f $v1/cpu.cfs_quota_us ]; then
		CPU_CAP_ROOT=$v1/kmond-cap-$$
		mkdir "$CPU_CAP_ROOT"
	elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		CPU_CAP_ROOT=/sys/fs/cgroup/kmond-cap-$$
		# v2: its children get cpu.max only where it hands them cpu
		mkdir "$CPU_CAP_ROOT" &&
			echo +cpu >"$CPU_CAP_ROOT/cgroup.subtree_control"
	else
		return 1
	fi
}

cpu_capped() {
	local cg=$CPU_CAP_ROOT/$1 quota
	quota=$(awk -v c="$2" 'BEGIN { printf "%d", c * 100000 }')
	shift 2
	{
		mkdir -p "$cg" &&
			if [ -f "$cg/cpu.cfs_quota_us" ]; then
				echo 100000 >"$cg/cpu.cfs_period_us" &&
					echo "$quota" >"$cg/cpu.cfs_quota_us"
			else
				echo "$quota 100000" >"$cg/cpu.max"
			fi &&
			echo "$BASHPID" >"$cg/cgroup.procs"
	} || { echo "cpu_capped: cannot cap $1 in $cg" >&2; exit 1; }
	exec "$@"
}

cpu_cap_gone() {
	[ -n "${CPU_CAP_ROOT:-}" ] || return 0
	rmdir "$CPU_CAP_ROOT"/*/ "$CPU_CAP_ROOT" 2>/dev/null || true
}
