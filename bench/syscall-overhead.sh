#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the syscall collector: a getppid storm timed without and with
# kmond counting it, kmond's own CPU and RSS, and the BPF program's cost
# per event (kernel.bpf_stats_enabled: run_time_ns / run_cnt).
#   bench/syscall-overhead.sh [CALLS]   (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-20000000}
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

run_storm() {
	local start end
	start=$(date +%s%N)
	"$WORK/kmt_bench" "$N"
	end=$(date +%s%N)
	echo $(((end - start) / 1000))
}

base_us=$(run_storm)
sysctl -q kernel.bpf_stats_enabled=1
kmond_start "$WORK/kmond.yaml"
cpu_before=$(kmond_ticks)
with_us=$(run_storm)
sleep 1.5
cpu_after=$(kmond_ticks)
hwm_kb=$(kmond_hwm_kib)
read -r run_ns run_cnt < <(bpf_cost sys_enter)
kmond_stop
counted=$(python3 tests/lib/records.py "$WORK/out.json" --kind syscall --where comm=kmt_bench --where syscall=getppid --sum count)
tck=$(getconf CLK_TCK)

echo "calls:                   $N (counted: $counted)"
echo "storm without kmond:     $((base_us / 1000)) ms ($((base_us * 1000 / N)) ns/call)"
echo "storm with kmond:        $((with_us / 1000)) ms ($((with_us * 1000 / N)) ns/call)"
echo "overhead per syscall:    $(((with_us - base_us) * 1000 / N)) ns"
echo "BPF per event:           $((run_ns / (run_cnt > 0 ? run_cnt : 1))) ns ($run_cnt events, every process's syscalls)"
echo "kmond CPU during storm:  $(((cpu_after - cpu_before) * 1000 / tck)) ms"
echo "kmond peak RSS:          $((hwm_kb / 1024)) MiB"
