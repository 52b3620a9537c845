#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the offcpu collector on a context-switch storm: a pipe
# ping-pong (two processes, each blocking in read() at every turn) run
# alternately without and with kmond; the workload's slowdown, kmond's CPU
# and the BPF program's cost per sched_switch (kernel.bpf_stats_enabled,
# in a run of its own: run_time_ns / run_cnt).
#   bench/offcpu-overhead.sh [all|selected] [ROUNDS] [SECONDS]   (as root, after make test)
# all: every process is monitored; selected: only the ping-pong is (the
# other switches take the early exit). PINGPONG_CPU=N pins both sides to
# CPU N (default 0: one switch per turn), PINGPONG_CPU= leaves them free.
# PINGPONG_WORK=NS: each side computes NS ns per message (default 0: the
# worst case, nothing but switches; 4000 gives ~180k switches/s, a busy
# service's rate).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
ROUNDS=${2:-5}
SECS=${3:-3}
CPU=${PINGPONG_CPU-0}
WORK_NS=${PINGPONG_WORK:-0}
work=$(mktemp -d /tmp/kmond-bench.XXXXXX)
kmond_pid=
cleanup() {
	[ -n "$kmond_pid" ] && kill -TERM "$kmond_pid" 2>/dev/null && wait "$kmond_pid"
	sysctl -q kernel.bpf_stats_enabled=0
	rm -rf "$work"
}
trap cleanup EXIT

cp build/tests/kmt_pingpong "$work/kmt_pingpong"
{
	echo "interval: 1s"
	if [ "$MODE" = selected ]; then
		printf 'services:\n  - name: pingpong\n    match: { comm: kmt_pingpong }\n'
	fi
	echo "collectors:"
	echo "  offcpu: { enabled: true, state: sleep, min_block: 1ms }"
	echo "exporters:"
	echo "  - { type: file, path: \"$work/out.json\" }"
} >"$work/kmond.yaml"

# rate: round trips per second of one run
pingpong() {
	"$work/kmt_pingpong" "$SECS" ${CPU:+--cpu "$CPU"} --work "$WORK_NS" |
		awk '{ print $6 }'
}

start_kmond() {
	build/kmond -c "$work/kmond.yaml" 2>"$work/err" &
	kmond_pid=$!
	until grep -q "running on" "$work/err"; do sleep 0.1; done
}

stop_kmond() {
	kill -TERM "$kmond_pid"
	wait "$kmond_pid"
	kmond_pid=
}

kmond_ticks() {
	awk '{ print $14 + $15 }' /proc/"$kmond_pid"/stat
}

prog_stats() {
	bpftool prog show -j | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("offcpu_switch"):
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))
        break'
}

tck=$(getconf CLK_TCK)
without=()
with=()
cpu_ms=0
# bpf_stats costs two clock reads per program run: off while timing.
for ((r = 1; r <= ROUNDS; r++)); do
	without+=("$(pingpong)")
	start_kmond
	t0=$(kmond_ticks)
	with+=("$(pingpong)")
	t1=$(kmond_ticks)
	cpu_ms=$((cpu_ms + (t1 - t0) * 1000 / tck))
	stop_kmond
	echo "round $r: without ${without[-1]}/s, with ${with[-1]}/s"
done
# One more run with kernel.bpf_stats_enabled, for the cost per switch.
start_kmond
sysctl -q kernel.bpf_stats_enabled=1
read -r ns0 cnt0 < <(prog_stats)
pingpong >/dev/null
read -r run_ns run_cnt < <(prog_stats)
sysctl -q kernel.bpf_stats_enabled=0
run_ns=$((run_ns - ns0))
run_cnt=$((run_cnt - cnt0))
stop_kmond

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(median "${without[@]}")
load=$(median "${with[@]}")
blocks=$(python3 tests/lib/records.py "$work/out.json" --kind stats --values collectors | tail -1)
echo "mode:                     $MODE, ping-pong on CPU ${CPU:-any}, $WORK_NS ns of work per message, $ROUNDS rounds of $SECS s"
echo "round trips/s without:    $base (median; 2 context switches each: $((2 * ${base%.*})) switches/s)"
echo "round trips/s with kmond: $load (median)"
echo "slowdown:                 $(awk -v a="$base" -v b="$load" 'BEGIN { printf "%.2f%%", (a - b) * 100 / a }')"
echo "kmond CPU:                $(awk -v ms="$cpu_ms" -v t="$((ROUNDS * SECS))" 'BEGIN { printf "%.2f%% of one core", ms / t / 10 }')"
echo "BPF per sched_switch:     $((run_ns / (run_cnt > 0 ? run_cnt : 1))) ns ($run_cnt switches, every CPU)"
echo "last stats:               $blocks"
