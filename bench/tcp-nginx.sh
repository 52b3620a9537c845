#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the tcp collector: nginx (1 worker) on loopback under wrk.
#
# Modes, alternating within each round:
#   off     no kmond
#   floor   no kmond, an empty program on each hook the tcp collector
#           runs on per request (bench/floor.bpf.c: sock_recv_length,
#           sock_send_length, tcp_sendmsg_locked, inet_sock_set_state,
#           the root cgroup's ingress)
#   idle    tcp on, neither nginx nor wrk monitored: what every process
#           pays
#   none    nginx monitored, requests: none (topology, load, no records)
#   all     nginx monitored, requests: all (a record per request)
#   client  wrk monitored instead (the client side), requests: all
#   every   nginx monitored, every collector on (configs/kmond.yaml's set)
# First the throughput rounds (bpf_stats off): the throughput ratio,
# kmond's CPU per request (utime + stime / requests) and its peak RSS.
# Then the BPF rounds (bpf_stats on, held by build/bench/bpf_stats_on):
# the run time of every program of the tcp collector (tcp_*, proto_*)
# per request, the median over the rounds with the spread, as a multiple
# of the floor's; and following one side over idle's, server (all) and
# client (client). A BPF round in which the send hook ran more often per
# request than the workload's own sends (another workload on the host)
# is left out and counted.
# BPF_KEEP=FILE keeps the BPF rounds' raw figures (bench/tcp_nginx_bpf.py
# reads them).
#   bench/tcp-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-3}
# 64 connections: with 16, runs without kmond alone varied by 25% (the
# two processes fall into batching or into a switch per request).
CONNS=${3:-64}
PORT=18631
bench_init
make -s build/bench/floor_load build/bench/bpf_stats_on
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ivmlinux/x86 -c bench/floor.bpf.c -o "$WORK/floor.bpf.o"
source tests/lib/nginx.sh
start_nginx $PORT 1
tck=$(getconf CLK_TCK)

# wrk's requests/s and request count
load() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # floor | idle | none | all | client | every
	if [ "$1" = floor ]; then # stopped by kmond_stop, measured the same way
		: >"$WORK/floor.out"
		build/bench/floor_load "$WORK/floor.bpf.o" >"$WORK/floor.out" 2>&1 &
		KMOND_PID=$!
		until grep -q attached "$WORK/floor.out"; do
			kill -0 $KMOND_PID || fail "floor_load: $(cat "$WORK/floor.out")"
			sleep 0.1
		done
		return
	fi
	local collectors="  tcp: { requests: all }" comm=nginx
	case $1 in
	none) collectors="  tcp: { requests: none }" ;;
	client) comm=wrk ;;
	idle) comm=kmt_nobody ;;
	every) collectors="  tcp: { requests: all }
  syscall: { enabled: true }
  drop: { enabled: true }
  offcpu: { enabled: true }
  bio: { enabled: true }
  counters: { tracepoints: [tcp:tcp_retransmit_skb, sched:sched_process_fork] }" ;;
	esac
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
MODES="floor idle none all client every"
BPF_MODES="floor idle none all client"
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
# bpf_stats costs two clock reads per program run: on only here.
bpf_stats_hold
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in $BPF_MODES; do
		start $mode
		read -r rps n < <(load)
		bpf_progs tcp_ proto_ | sed "s/^/$mode $r $n /" >>"$WORK/bpf"
		kmond_stop
		echo "bpf round $r $mode: $n requests"
	done
done
bpf_stats_release

echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker"
echo "without kmond: $(calc "${rps_sum[off]} / $ROUNDS" 0) req/s"
for mode in $MODES; do
	echo "mode $mode: throughput ratio $(calc "${rps_sum[$mode]} / ${rps_sum[off]}" 4)," \
		"kmond CPU $(calc "${cpu_sum[$mode]} * 1000000 / $tck / ${reqs_sum[$mode]}") us/request," \
		"peak RSS $((hwm[$mode] / 1024)) MiB"
done
if [ -n "${BPF_KEEP:-}" ]; then cp "$WORK/bpf" "$BPF_KEEP"; fi
python3 bench/tcp_nginx_bpf.py "$WORK/bpf"
