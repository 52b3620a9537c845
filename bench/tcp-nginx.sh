#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the tcp collector: nginx on loopback under wrk, runs alternating
# within each round: without kmond; with it (tcp on, requests: all, then
# none; then every collector on, as configs/kmond.yaml has them, requests:
# all; then the client side: wrk monitored instead of nginx, requests:
# all; then idle: tcp on but neither monitored, the floor both pay); and
# floor: no kmond but empty programs on the same tp_btf hooks
# (bench/floor.bpf.c, loaded by build/bench/floor_load).
# Per mode, medians with [min .. max] over the rounds: the throughput ratio
# (over the same round's run without kmond), the wall time per request
# added, kmond's CPU per request (its threads' CPU over the run, the last
# interval included, / wrk's requests: with requests: all a record per
# request) and its peak RSS (VmHWM); and, from one more run per mode with
# kernel.bpf_stats_enabled, the BPF programs' cost per event and per
# request: per request over every tcp program, minus idle's, is what
# following one side costs (server: mode all, client: mode client), and
# all's and none's as a multiple of the floor's.
#   bench/tcp-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root; 10 rounds)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-5}
# 64 connections: with 16, runs without kmond alone varied by 25% (the
# two processes fall into batching or into a switch per request).
CONNS=${3:-64}
PORT=18631
make -s build/kmond build/bench/floor_load || fail "cannot build kmond"
bench_init
source tests/lib/nginx.sh
start_nginx $PORT 1

# wrk's requests/s and request count
load() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # all | none | every | client | idle | floor
	if [ "$1" = floor ]; then # stopped by kmond_stop, measured the same way
		floor_start floor.bpf.c
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
median() { median_spread "$@" | awk '{ print $1 }'; }
declare -A ratio added cpu hwm
declare -A bpf_ns bpf_cnt bpf_reqs bpf_all_ns
MODES="all none every client idle floor"
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	read -r rps_off n < <(load)
	line="round $r: off $rps_off req/s"
	for mode in $MODES; do
		start $mode
		c0=$(proc_cpu_ns "$KMOND_PID")
		read -r rps n < <(load)
		[ $mode != floor ] && sleep 1.1 # the last interval's collect counts too
		c1=$(proc_cpu_ns "$KMOND_PID")
		hwm[$mode]+=" $(($(kmond_hwm_kib) / 1024))"
		kmond_stop
		ratio[$mode]+=" $(calc "$rps / $rps_off" 4)"
		added[$mode]+=" $(calc "1e9 / $rps - 1e9 / $rps_off" 0)"
		cpu[$mode]+=" $(calc "($c1 - $c0) / 1000 / $n")"
		line+=", $mode $rps"
	done
	echo "$line"
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

echo
echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker; median [min .. max]"
echo "over the rounds. ratio: throughput over the same round's run without kmond; added: wall ns"
echo "per request over it; kmond CPU: its threads' CPU / requests (all: a record per request);"
echo "BPF: from one more run per mode with bpf_stats (which adds ~40 ns per program run)."
# shellcheck disable=SC2086
for mode in $MODES; do
	echo "mode $mode: ratio $(median_spread ${ratio[$mode]}), added $(median_spread ${added[$mode]}) ns," \
		"kmond CPU $(median_spread ${cpu[$mode]}) us/request, peak RSS $(median_spread ${hwm[$mode]}) MiB," \
		"BPF $(calc "${bpf_ns[$mode]} / (${bpf_cnt[$mode]} + 0.000001)" 0) ns per recv/send event" \
		"($(calc "${bpf_cnt[$mode]} / ${bpf_reqs[$mode]}" 1) per request, wrk's included)," \
		"$(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]}" 0) ns per request (every tcp program)"
done
per_req() { calc "${bpf_all_ns[$1]} / ${bpf_reqs[$1]} - ${bpf_all_ns[idle]} / ${bpf_reqs[idle]}" 0; }
echo "BPF per request over idle's: server side (nginx monitored) $(per_req all) ns," \
	"client side (wrk monitored) $(per_req client) ns"
# shellcheck disable=SC2086
echo "kmond CPU per request (user space, a record each): server side $(median ${cpu[all]}) us," \
	"client side $(median ${cpu[client]}) us; target 0.25"
# shellcheck disable=SC2086
echo "every collector on: throughput ratio $(median ${ratio[every]}) (target >= 0.95)," \
	"peak RSS $(median ${hwm[every]}) MiB (target <= 32)"
for mode in all none; do
	# shellcheck disable=SC2086
	echo "mode $mode over the floor: ns per request added $(median ${added[$mode]})" \
		"(floor $(median ${added[floor]}), $(calc "$(median ${added[$mode]}) / ($(median ${added[floor]}) + 0.000001)" 1)x; noisy)," \
		"BPF ns per request $(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]}" 0)" \
		"(floor $(calc "${bpf_all_ns[floor]} / ${bpf_reqs[floor]}" 0)," \
		"$(calc "${bpf_all_ns[$mode]} / ${bpf_reqs[$mode]} / (${bpf_all_ns[floor]} / ${bpf_reqs[floor]} + 0.000001)" 1)x)"
done
