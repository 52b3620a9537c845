#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the syscall collector: a getppid storm timed without and with
# kmond counting it, kmond's own CPU and RSS, and the BPF program's cost
# per event (kernel.bpf_stats_enabled: run_time_ns / run_cnt).
#   bench/syscall-overhead.sh [CALLS]   (as root, after make)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000000}
work=$(mktemp -d /tmp/kmond-bench.XXXXXX)
kmond_pid=
cleanup() {
	[ -n "$kmond_pid" ] && kill -TERM "$kmond_pid" 2>/dev/null && wait "$kmond_pid"
	sysctl -q kernel.bpf_stats_enabled=0
	rm -rf "$work"
}
trap cleanup EXIT

cp build/tests/kmt_getppid "$work/kmt_bench"
cat >"$work/kmond.yaml" <<YAML
interval: 1s
services:
  - name: bench
    match: { comm: kmt_bench }
collectors:
  syscall: { enabled: true }
exporters:
  - { type: file, path: "$work/out.json" }
YAML

run_storm() {
	local start end
	start=$(date +%s%N)
	"$work/kmt_bench" "$N"
	end=$(date +%s%N)
	echo $(((end - start) / 1000))
}

base_us=$(run_storm)
sysctl -q kernel.bpf_stats_enabled=1
build/kmond -c "$work/kmond.yaml" 2>"$work/err" &
kmond_pid=$!
until grep -q "running on" "$work/err"; do sleep 0.1; done
cpu_before=$(awk '{ print $14 + $15 }' /proc/$kmond_pid/stat)
with_us=$(run_storm)
sleep 1.5
cpu_after=$(awk '{ print $14 + $15 }' /proc/$kmond_pid/stat)
hwm_kb=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$kmond_pid/status)
read -r run_ns run_cnt < <(bpftool prog show -j | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("sys_enter"):
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))
        break')
kill -TERM $kmond_pid
wait $kmond_pid
kmond_pid=
counted=$(python3 tests/lib/records.py "$work/out.json" --kind syscall --where comm=kmt_bench --where syscall=getppid --sum count)
tck=$(getconf CLK_TCK)

echo "calls:                   $N (counted: $counted)"
echo "storm without kmond:     $((base_us / 1000)) ms ($((base_us * 1000 / N)) ns/call)"
echo "storm with kmond:        $((with_us / 1000)) ms ($((with_us * 1000 / N)) ns/call)"
echo "overhead per syscall:    $(((with_us - base_us) * 1000 / N)) ns"
echo "BPF per event:           $((run_ns / (run_cnt > 0 ? run_cnt : 1))) ns ($run_cnt events, every process's syscalls)"
echo "kmond CPU during storm:  $(((cpu_after - cpu_before) * 1000 / tck)) ms"
echo "kmond peak RSS:          $((hwm_kb / 1024)) MiB"
