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
cd "$(dirname "$0")/.."
source bench/lib.sh
MODE=${1:-all}
ROUNDS=${2:-5}
SECS=${3:-3}
CPU=${PINGPONG_CPU-0}
WORK_NS=${PINGPONG_WORK:-0}
bench_init

cp build/tests/kmt_pingpong "$WORK/kmt_pingpong"
{
	echo "interval: 1s"
	if [ "$MODE" = selected ]; then
		printf 'services:\n  - name: pingpong\n    match: { comm: kmt_pingpong }\n'
	fi
	echo "collectors:"
	echo "  offcpu: { enabled: true, state: sleep, min_block: 1ms }"
	echo "exporters:"
	echo "  - { type: file, path: \"$WORK/out.json\" }"
} >"$WORK/kmond.yaml"

# rate: round trips per second of one run
pingpong() {
	"$WORK/kmt_pingpong" "$SECS" ${CPU:+--cpu "$CPU"} --work "$WORK_NS" |
		awk '{ print $6 }'
}

tck=$(getconf CLK_TCK)
without=()
with=()
cpu_ms=0
# bpf_stats costs two clock reads per program run: off while timing.
for ((r = 1; r <= ROUNDS; r++)); do
	without+=("$(pingpong)")
	kmond_start "$WORK/kmond.yaml"
	t0=$(kmond_ticks)
	with+=("$(pingpong)")
	t1=$(kmond_ticks)
	cpu_ms=$((cpu_ms + (t1 - t0) * 1000 / tck))
	kmond_stop
	echo "round $r: without ${without[-1]}/s, with ${with[-1]}/s"
done
# One more run with kernel.bpf_stats_enabled, for the cost per switch.
kmond_start "$WORK/kmond.yaml"
sysctl -q kernel.bpf_stats_enabled=1
read -r ns0 cnt0 < <(bpf_cost offcpu_switch)
pingpong >/dev/null
read -r run_ns run_cnt < <(bpf_cost offcpu_switch)
sysctl -q kernel.bpf_stats_enabled=0
run_ns=$((run_ns - ns0))
run_cnt=$((run_cnt - cnt0))
kmond_stop

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(median "${without[@]}")
load=$(median "${with[@]}")
blocks=$(python3 tests/lib/records.py "$WORK/out.json" --kind stats --values collectors | tail -1)
echo "mode:                     $MODE, ping-pong on CPU ${CPU:-any}, $WORK_NS ns of work per message, $ROUNDS rounds of $SECS s"
echo "round trips/s without:    $base (median; 2 context switches each: $((2 * ${base%.*})) switches/s)"
echo "round trips/s with kmond: $load (median)"
echo "slowdown:                 $(awk -v a="$base" -v b="$load" 'BEGIN { printf "%.2f%%", (a - b) * 100 / a }')"
echo "kmond CPU:                $(awk -v ms="$cpu_ms" -v t="$((ROUNDS * SECS))" 'BEGIN { printf "%.2f%% of one core", ms / t / 10 }')"
echo "BPF per sched_switch:     $((run_ns / (run_cnt > 0 ? run_cnt : 1))) ns ($run_cnt switches, every CPU)"
echo "last stats:               $blocks"
