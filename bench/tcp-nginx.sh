#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the tcp collector: nginx on loopback under wrk, runs alternating
# without kmond and with it (tcp on, requests: all, then none; then
# every collector on, as configs/kmond.yaml has them, requests: all). Reports
# the throughput ratio, kmond's CPU per request (utime + stime over the
# run / requests), its peak RSS (VmHWM), and the BPF programs' cost per
# event (kernel.bpf_stats_enabled, in one more run per mode).
#   bench/tcp-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-3}
SECS=${2:-5}
# 64 connections: with 16, runs without kmond alone varied by 25% (the
# two processes fall into batching or into a switch per request).
CONNS=${3:-64}
PORT=18631
bench_init
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
	kmond_start "$WORK/kmond.yaml"
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
declare -A rps_sum reqs_sum cpu_sum hwm
declare -A bpf_ns bpf_cnt bpf_reqs
for mode in off all none every; do
	rps_sum[$mode]=0 reqs_sum[$mode]=0 cpu_sum[$mode]=0 hwm[$mode]=0
done
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in off all none every; do
		if [ $mode != off ]; then
			start $mode
			c0=$(kmond_ticks)
		fi
		read -r rps n < <(load)
		if [ $mode != off ]; then
			sleep 1.1 # the last interval's collect counts too
			c1=$(kmond_ticks)
			h=$(kmond_hwm_kib)
			[ "$h" -gt "${hwm[$mode]}" ] && hwm[$mode]=$h
			cpu_sum[$mode]=$((cpu_sum[$mode] + c1 - c0))
			kmond_stop
		fi
		echo "round $r $mode: $rps req/s ($n requests)"
		rps_sum[$mode]=$(calc "${rps_sum[$mode]} + $rps" 2)
		reqs_sum[$mode]=$((reqs_sum[$mode] + n))
	done
done
# bpf_stats costs two clock reads per program run: off while timing,
# on in one more run per mode, for the cost per event.
for mode in all none every; do
	start $mode
	sysctl -q kernel.bpf_stats_enabled=1
	read -r rps n < <(load)
	read -r bpf_ns[$mode] bpf_cnt[$mode] < <(bpf_cost tcp_recv tcp_send)
	bpf_reqs[$mode]=$n
	sysctl -q kernel.bpf_stats_enabled=0
	kmond_stop
done
echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker"
echo "without kmond: $(calc "${rps_sum[off]} / $ROUNDS" 0) req/s"
for mode in all none every; do
	echo "requests: $mode  throughput ratio $(calc "${rps_sum[$mode]} / ${rps_sum[off]}" 4)," \
		"kmond CPU $(calc "${cpu_sum[$mode]} * 1000000 / $tck / ${reqs_sum[$mode]}") us/request," \
		"peak RSS $((hwm[$mode] / 1024)) MiB," \
		"BPF $(calc "${bpf_ns[$mode]} / (${bpf_cnt[$mode]} + 0.000001)" 0) ns per recv/send event" \
		"($(calc "${bpf_cnt[$mode]} / ${bpf_reqs[$mode]}" 1) per request, wrk's included)"
done
