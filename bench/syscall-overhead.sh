#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the syscall collector: a getppid storm, alternating within each
# round without anything on sys_enter, with an empty program on it (the
# floor: every syscall then takes the kernel's slow path), with a program
# that only takes the caller's pid (pid: the least a count per process
# does, bench/floor_syscall_pid.bpf.c) and with kmond counting it. Per
# mode the storm's ns per call, medians with [min .. max] over the
# rounds, and what kmond adds over none (target: 80 ns), over the floor
# and over pid; then, from one more run each with kernel.bpf_stats_enabled,
# the BPF programs' ns per run (bpf_stats adds ~40 ns to each), kmond's
# CPU and peak RSS, and that every call was counted.
#   bench/syscall-overhead.sh [ROUNDS] [CALLS]   (as root; 10 rounds)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
N=${2:-10000000}
make -s build/kmond build/bench/floor_load build/tests/kmt_getppid ||
	fail "cannot build kmond"
bench_init
cp build/tests/kmt_getppid "$WORK/kmt_bench"
cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - name: bench
    match: { comm: kmt_bench }
collectors:
  syscall: { enabled: true }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML

storm() { # ns per call
	local start end
	start=$(date +%s%N)
	"$WORK/kmt_bench" "$N"
	end=$(date +%s%N)
	awk -v d=$((end - start)) -v n="$N" 'BEGIN { printf "%.1f\n", d / n }'
}
start() { # floor | pid | kmond
	case $1 in
	floor) floor_start floor_syscall.bpf.c ;;
	pid) floor_start floor_syscall_pid.bpf.c ;;
	kmond) kmond_start "$WORK/kmond.yaml" ;;
	esac
}
minus() { awk -v a="$1" -v b="$2" 'BEGIN { print a - b }'; }
declare -A per added over cur
for ((r = 1; r <= ROUNDS; r++)); do
	cur[none]=$(storm)
	for mode in floor pid kmond; do
		start $mode
		cur[$mode]=$(storm)
		kmond_stop
	done
	line="round $r: ns per getppid: none ${cur[none]}"
	per[none]+=" ${cur[none]}"
	for mode in floor pid kmond; do
		per[$mode]+=" ${cur[$mode]}"
		added[$mode]+=" $(minus "${cur[$mode]}" "${cur[none]}")"
		line+=", $mode ${cur[$mode]}"
	done
	over[floor]+=" $(minus "${cur[kmond]}" "${cur[floor]}")"
	over[pid]+=" $(minus "${cur[kmond]}" "${cur[pid]}")"
	echo "$line"
done
# bpf_stats on: the programs' own time per run (and kmond's, its CPU).
declare -A bpf
for mode in floor pid kmond; do
	rm -f "$WORK/out.json" # the last run's records only
	start $mode
	sysctl -q kernel.bpf_stats_enabled=1
	c0=$(proc_cpu_ns "$KMOND_PID")
	storm >/dev/null
	[ $mode = kmond ] && sleep 1.5 # its last interval
	c1=$(proc_cpu_ns "$KMOND_PID")
	read -r ns cnt < <(bpf_cost sys_enter)
	bpf[$mode]=$(awk -v t="$ns" -v n="$cnt" 'BEGIN { printf "%.0f ns per run (%d runs)", t / (n + !n), n }')
	sysctl -q kernel.bpf_stats_enabled=0
	[ $mode = kmond ] && cpu_ms=$(((c1 - c0) / 1000000)) hwm=$(($(kmond_hwm_kib) / 1024))
	kmond_stop
done
counted=$(python3 tests/lib/records.py "$WORK/out.json" --kind syscall --where comm=kmt_bench --where syscall=getppid --sum count)

echo
echo "$N getppid calls per run, $ROUNDS rounds alternating; median [min .. max] over rounds"
# shellcheck disable=SC2086
{
	echo "ns per call:   none $(median_spread ${per[none]}), floor $(median_spread ${per[floor]}), pid $(median_spread ${per[pid]}), kmond $(median_spread ${per[kmond]})"
	echo "added per call over none: floor (an empty program) $(median_spread ${added[floor]}), pid (only the pid taken) $(median_spread ${added[pid]}), kmond $(median_spread ${added[kmond]}) (target 80)"
	echo "kmond over the floor:     $(median_spread ${over[floor]}) ns per call; over pid: $(median_spread ${over[pid]})"
}
echo "BPF with bpf_stats (every process's syscalls): floor ${bpf[floor]}, pid ${bpf[pid]}, kmond ${bpf[kmond]}"
echo "kmond: CPU $cpu_ms ms during the last storm, peak RSS $hwm MiB, counted $counted of $N (the last run)"
