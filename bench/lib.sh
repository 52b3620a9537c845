# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared by the benchmarks (sourced from the repository root, after make):
# a work directory, kmond started and stopped, its CPU and peak RSS, and
# the BPF programs' cost per run (kernel.bpf_stats_enabled). At exit kmond
# and every pid in STARTED_PIDS get SIGTERM, bpf_stats goes off and WORK
# is removed.
#   bench_init [TEMPLATE]      sets WORK (mktemp -d TEMPLATE)
#   kmond_start CONFIG [ARG..] runs build/kmond (log: $WORK/err, records
#                              on stdout: $WORK/stdout) until "running on"
#   kmond_stop                 SIGTERM, waits; fails unless it exits 0
#   kmond_ticks                its utime + stime, in clock ticks
#   proc_cpu_ns PID            the CPU a running process used so far, in ns
#                              (its threads' schedstat: clock ticks are
#                              10 ms, as much as a whole run of some tools)
#   kmond_hwm_kib              its peak RSS (VmHWM), KiB
#   bpf_progs PREFIX...        "name run_time_ns run_cnt" of each program
#                              the running kmond (else anyone) loaded whose
#                              name starts with a PREFIX
#   bpf_cost PREFIX...         "run_time_ns run_cnt" summed over them
#   floor_start SRC [CGROUP]   compiles bench/SRC (empty programs on kmond's
#                              hooks) and holds them attached with
#                              build/bench/floor_load (cgroup programs on
#                              CGROUP), as KMOND_PID (so kmond_stop stops
#                              it, kmond_* measure it)
#   median_spread VALUES...    "median [min .. max]"
#   bpf_stats_hold             keeps the run-time stats on until
#                              bpf_stats_release (or exit), whatever
#                              others do to kernel.bpf_stats_enabled
#                              (build/bench/bpf_stats_on)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/kmond_proc.sh"

STARTED_PIDS=()
KMOND_PID=
WORK=

fail() { echo "bench: $*" >&2; exit 1; }

bench_cleanup() {
	local pid
	for pid in $KMOND_PID "${STARTED_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in $KMOND_PID "${STARTED_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	sysctl -q kernel.bpf_stats_enabled=0
	[ -n "$WORK" ] && rm -rf "$WORK"
}

bench_init() {
	WORK=$(mktemp -d "${1:-/tmp/kmond-bench.XXXXXX}")
	trap bench_cleanup EXIT
}

kmond_start() {
	kmond_launch build/kmond "$WORK/stdout" "$WORK/err" "$@" ||
		fail "kmond: $(tail -3 "$WORK/err")"
}

kmond_stop() {
	local rc=0
	kmond_terminate || rc=$?
	[ "$rc" -eq 0 ] || fail "kmond exited with $rc"
}

kmond_ticks() { awk '{ print $14 + $15 }' "/proc/$KMOND_PID/stat"; }

proc_cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ ns += $1 } END { print ns + 0 }'
}

kmond_hwm_kib() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$KMOND_PID/status"; }

bpf_progs() {
	# Only the running kmond's (its fds' prog ids): other kmonds may run
	# on a shared machine. An fd closed between the glob and its read
	# makes grep exit 2 with the ids found: not an error here (under
	# set -e it ended the bench silently).
	local ids=
	[ -n "$KMOND_PID" ] && ids=$({ grep -h '^prog_id:' /proc/"$KMOND_PID"/fdinfo/* 2>/dev/null || true; } |
		awk '{ print $2 }' | tr '\n' ,)
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split(",") if i}
for p in json.load(sys.stdin):
    if ids and p["id"] not in ids:
        continue
    if p.get("name", "").startswith(tuple(sys.argv[2:])):
        print(p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$ids" "$@"
}

bpf_cost() { bpf_progs "$@" | awk '{ ns += $2; n += $3 } END { print ns + 0, n + 0 }'; }

floor_start() {
	local obj=$WORK/${1%.c}.o
	[ -e "$obj" ] || clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ivmlinux/x86 \
		-c "bench/$1" -o "$obj" || fail "cannot build bench/$1"
	: >"$WORK/floor.out" # not the last floor's "attached"
	build/bench/floor_load "$obj" "${@:2}" >"$WORK/floor.out" 2>&1 &
	KMOND_PID=$!
	until grep -q attached "$WORK/floor.out"; do
		kill -0 $KMOND_PID || fail "floor_load: $(cat "$WORK/floor.out")"
		sleep 0.1
	done
}

median_spread() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "-"; exit } printf "%s [%s .. %s]", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

BPF_STATS_PID=
bpf_stats_hold() {
	[ -x build/bench/bpf_stats_on ] || make -s build/bench/bpf_stats_on >&2
	build/bench/bpf_stats_on >"$WORK/bpf_stats_on.out" 2>&1 &
	BPF_STATS_PID=$!
	STARTED_PIDS+=($BPF_STATS_PID)
	until grep -q '^on' "$WORK/bpf_stats_on.out" 2>/dev/null; do
		kill -0 $BPF_STATS_PID 2>/dev/null ||
			fail "bpf_stats_on: $(cat "$WORK/bpf_stats_on.out")"
		sleep 0.1
	done
}

bpf_stats_release() {
	kill -TERM $BPF_STATS_PID 2>/dev/null || true
	wait $BPF_STATS_PID 2>/dev/null || true
}

