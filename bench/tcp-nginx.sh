#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the tcp collector: nginx on loopback under wrk, runs alternating
# without kmond and with it (tcp on, requests: all, then none; then
# every collector on, as configs/kmond.yaml has them, requests: all). Reports
# the throughput ratio, kmond's CPU per request (utime + stime over the
# run / requests), its peak RSS (VmHWM), and the BPF programs' cost per
# event (kernel.bpf_stats_enabled).
#   bench/tcp-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root, after make)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
CONNS=${3:-16}
PORT=18631
WORK=$(mktemp -d /tmp/kmond-bench.XXXXXX)
STARTED_PIDS=()
kmond_pid=
fail() { echo "bench: $*" >&2; exit 1; }
cleanup() {
	[ -n "$kmond_pid" ] && kill -TERM "$kmond_pid" 2>/dev/null && wait "$kmond_pid" || true
	for pid in "${STARTED_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
	sysctl -q kernel.bpf_stats_enabled=0
	rm -rf "$WORK"
}
trap cleanup EXIT
source tests/lib/nginx.sh
start_nginx $PORT 1
tck=$(getconf CLK_TCK)

# wrk's requests/s and request count
load() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # all | none | every
	local collectors="  tcp: { requests: $1 }"
	[ "$1" = every ] && collectors="  tcp: { requests: all }
  syscall: { enabled: true }
  drop: { enabled: true }
  offcpu: { enabled: true }
  bio: { enabled: true }
  counters: { tracepoints: [tcp:tcp_retransmit_skb, sched:sched_process_fork] }"
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: nginx } }
collectors:
$collectors
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
	build/kmond -c "$WORK/kmond.yaml" 2>"$WORK/err" &
	kmond_pid=$!
	until grep -q "running on" "$WORK/err"; do sleep 0.1; done
}

stop() {
	kill -TERM "$kmond_pid"
	wait "$kmond_pid"
	kmond_pid=
}

cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$kmond_pid"/stat; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
# run_time_ns and run_cnt of kmond's recv and send programs, summed
bpf_cost() {
	bpftool prog show -j | python3 -c '
import json, sys
ns = cnt = 0
for p in json.load(sys.stdin):
    if p.get("name", "").startswith(("tcp_recv", "tcp_send")):
        ns += p.get("run_time_ns", 0); cnt += p.get("run_cnt", 0)
print(ns, cnt)'
}

sysctl -q kernel.bpf_stats_enabled=1
declare -A rps_sum reqs_sum cpu_sum hwm
declare -A bpf_ns bpf_cnt
for mode in off all none every; do
	rps_sum[$mode]=0 reqs_sum[$mode]=0 cpu_sum[$mode]=0 hwm[$mode]=0
	bpf_ns[$mode]=0 bpf_cnt[$mode]=0
done
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in off all none every; do
		if [ $mode != off ]; then
			start $mode
			c0=$(cpu_ticks)
		fi
		read -r rps n < <(load)
		if [ $mode != off ]; then
			sleep 1.1 # the last interval's collect counts too
			c1=$(cpu_ticks)
			h=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$kmond_pid/status)
			[ "$h" -gt "${hwm[$mode]}" ] && hwm[$mode]=$h
			cpu_sum[$mode]=$((cpu_sum[$mode] + c1 - c0))
			read -r ns cnt < <(bpf_cost)
			bpf_ns[$mode]=$((bpf_ns[$mode] + ns))
			bpf_cnt[$mode]=$((bpf_cnt[$mode] + cnt))
			stop
		fi
		echo "round $r $mode: $rps req/s ($n requests)"
		rps_sum[$mode]=$(calc "${rps_sum[$mode]} + $rps" 2)
		reqs_sum[$mode]=$((reqs_sum[$mode] + n))
	done
done
echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker"
echo "without kmond: $(calc "${rps_sum[off]} / $ROUNDS" 0) req/s"
for mode in all none every; do
	echo "requests: $mode  throughput ratio $(calc "${rps_sum[$mode]} / ${rps_sum[off]}" 4)," \
		"kmond CPU $(calc "${cpu_sum[$mode]} * 1000000 / $tck / ${reqs_sum[$mode]}") us/request," \
		"peak RSS $((hwm[$mode] / 1024)) MiB," \
		"BPF $(calc "${bpf_ns[$mode]} / (${bpf_cnt[$mode]} + 0.000001)" 0) ns per recv/send event" \
		"($(calc "${bpf_cnt[$mode]} / ${reqs_sum[$mode]}" 1) per request, wrk's included)"
done
