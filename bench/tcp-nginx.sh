#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the tcp collector: nginx on loopback under wrk, runs alternating
# without kmond and with it (tcp on, requests: all, then none; then
# every collector on, as configs/kmond.yaml has them, requests: all; then
# the client side: wrk monitored instead of nginx, requests: all; then
# idle: tcp on but neither monitored, the floor both pay). Reports
# the throughput ratio, kmond's CPU per request (utime + stime over the
# run / requests), its peak RSS (VmHWM), and the BPF programs' cost per
# event and per request (kernel.bpf_stats_enabled, in one more run per
# mode): per request over every tcp program, minus idle's, is what
# following one side costs (server: mode all, client: mode client).
# Mode floor: no kmond but empty programs on the same tp_btf hooks
# (bench/floor.bpf.c); kmond's cost per request is also given as a
# multiple of the floor's, over the runs without anything.
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
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ivmlinux/x86 -c bench/floor.bpf.c -o "$WORK/floor.bpf.o"
source tests/lib/nginx.sh
start_nginx $PORT 1
tck=$(getconf CLK_TCK)

# wrk's requests/s and request count
load() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # all | none | every | client | idle | floor
	if [ "$1" = floor ]; then # stopped by kmond_stop, measured the same way
		floor_start "$WORK/floor.bpf.o"
		return
	fi
	local collectors="  tcp: { requests: $1 }" comm=nginx
	case $1 in
	client) comm=wrk collectors="  tcp: { requests: all }" ;;
	idle) comm=kmt_nobody collectors="  tcp: { requests: all }" ;;
	esac
	[ "$1" = every ] && collectors="  tcp: { requests: all }
  syscall: { enabled: true }
  drop: { enabled: true }
  offcpu: { enabled: true }
  bio: { enabled: true }
  counters: { tracepoints: [tcp:tcp_retransmit_skb, sched:sched_process_fork] }"
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: $comm } }
collectors:
$collectors
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
	kmond_start "$WORK/kmond.yaml"
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
declare -A rps_sum reqs_sum cpu_sum hwm
declare -A bpf_ns bpf_cnt bpf_reqs bpf_all_ns
MODES="all none every client idle floor"
for mode in off $MODES; do
	rps_sum[$mode]=0 reqs_sum[$mode]=0 cpu_sum[$mode]=0 hwm[$mode]=0
done
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in off $MODES; do
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
for mode in $MODES; do
	start $mode
	sysctl -q kernel.bpf_stats_enabled=1
	read -r rps n < <(load)
	read -r bpf_ns[$mode] bpf_cnt[$mode] < <(bpf_cost tcp_recv tcp_send)
	read -r bpf_all_ns[$mode] _ < <(bpf_cost tcp_)
	bpf_reqs[$mode]=$n
	sysctl -q kernel.bpf_stats_enabled=0
	kmond_stop
done
echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker"
echo "without kmond: $(calc "${rps_sum[off]} / $ROUNDS" 0) req/s"
for mode in $MODES; do
	echo "mode: $mode  throughput ratio $(calc "${rps_sum[$mode]} / ${rps_sum[off]}" 4)," \
		"kmond CPU $(calc "${cpu_sum[$mode]} * 1000000 / $tck / ${reqs_sum[$mode]}") us/request," \
		"peak RSS $((hwm[$mode] / 1024)) MiB," \
		"BPF $(calc "${bpf_ns[$mode]} / (${bpf_cnt[$mode]} + 0.000001)" 0) ns per recv/send event" \
		"($(calc "${bpf_cnt[$mode]} / ${bpf_reqs[$mode]}" 1) per request, wrk's included)," \
		"BPF $(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]}" 0) ns per request (every tcp program)"
done
per_req() { calc "${bpf_all_ns[$1]} / ${bpf_reqs[$1]} - ${bpf_all_ns[idle]} / ${bpf_reqs[idle]}" 0; }
echo "BPF per request over idle's: server side (nginx monitored) $(per_req all) ns," \
	"client side (wrk monitored) $(per_req client) ns"
kcpu() { calc "${cpu_sum[$1]} * 1000000 / $tck / ${reqs_sum[$1]}"; }
echo "kmond CPU per request: server side $(kcpu all) us, client side $(kcpu client) us"
# Over the runs without anything: wall time per request (1 / throughput).
over() { calc "1000000000 * ${ROUNDS} / ${rps_sum[$1]} - 1000000000 * ${ROUNDS} / ${rps_sum[off]}" 0; }
for mode in all none; do
	echo "mode $mode over the floor: ns per request added $(over $mode) (floor $(over floor)," \
		"$(calc "($(over $mode)) / ($(over floor) + 0.000001)" 1)x; noisy), BPF ns per request" \
		"$(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]}" 0) (floor $(calc "${bpf_all_ns[floor]} / ${bpf_reqs[floor]}" 0)," \
		"$(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]} / (${bpf_all_ns[floor]} / ${bpf_reqs[floor]} + 0.000001)" 1)x)"
done
