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
#   hash    as all, with every iterator refused (KMOND_PROBE_FAIL_LOAD=iter,
#           as kernels that refuse them): the connection state in the
#           hash, flushed by a run
#   every   nginx monitored, every collector on (configs/kmond.yaml's set)
#   floor-every  no kmond, an empty program on each hook of every's
#           collectors (bench/floor_every.bpf.c: floor's, sys_enter,
#           sched_switch, kfree_skb, the block and process hooks): the
#           hooks' own price, below which no program on them goes
# First the throughput rounds (bpf_stats off), per mode medians with
# [min .. max] over the rounds: the throughput ratio (over the same
# round's run without kmond), the wall time per request added, kmond's CPU
# per request (its threads' CPU over the run, the last interval included,
# / wrk's requests: with requests: all a record per request) and its peak
# RSS (VmHWM).
# Then the BPF rounds (bpf_stats on, held by build/bench/bpf_stats_on):
# the run time of every program of the tcp collector (tcp_*, proto_*)
# per request, the median over the rounds with the spread, as a multiple
# of the floor's (and in every and floor-every, of all their programs);
# and following one side over idle's, server (all) and client (client).
# A BPF round in which the send hook ran more often per request than the
# workload's own sends (another workload on the host) is left out and
# counted.
# BPF_KEEP=FILE keeps the BPF rounds' raw figures (bench/tcp_nginx_bpf.py
# reads them).
#   bench/tcp-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root; 10 rounds)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-5}
# 64 connections: with 16, runs without kmond alone varied by 25% (the
# two processes fall into batching or into a switch per request).
CONNS=${3:-64}
PORT=18631
make -s build/kmond build/bench/floor_load build/bench/bpf_stats_on ||
	fail "cannot build kmond"
bench_init
source tests/lib/nginx.sh
start_nginx $PORT 1

# wrk's requests/s and request count
load() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # floor | floor-every | idle | none | all | hash | client | every
	# Each run's records alone: grown by every earlier run (GBs), the
	# file had the kernel writing it back while kmond wrote, which
	# raised kmond's CPU per record by up to 2x in some rounds.
	rm -f "$WORK/out.json"
	if [[ $1 = floor* ]]; then # stopped by kmond_stop, measured the same way
		floor_start "${1/-/_}.bpf.c"
		return
	fi
	local collectors="  tcp: { requests: all }" comm=nginx refuse=
	case $1 in
	hash) refuse=iter ;;
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
	KMOND_PROBE_FAIL_LOAD=$refuse kmond_start "$WORK/kmond.yaml"
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
median() { median_spread "$@" | awk '{ print $1 }'; }
declare -A ratio added cpu hwm bpf_every
MODES="floor idle none all hash client every floor-every"
BPF_MODES="floor idle none all hash client"
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	read -r rps_off n < <(load)
	line="round $r: off $rps_off req/s"
	for mode in $MODES; do
		start $mode
		c0=$(proc_cpu_ns "$KMOND_PID")
		read -r rps n < <(load)
		[[ $mode != floor* ]] && sleep 1.1 # the last interval's collect counts too
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
# bpf_stats costs two clock reads per program run: on only here.
bpf_stats_hold
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in $BPF_MODES every floor-every; do
		start $mode
		read -r rps n < <(load)
		if [[ $mode = *every ]]; then # every program of theirs
			read -r ns _ < <(bpf_cost "")
			bpf_every[$mode]+=" $(calc "$ns / $n" 0)"
		else # the tcp collector's, per hook (tcp_nginx_bpf.py)
			bpf_progs tcp_ proto_ | sed "s/^/$mode $r $n /" >>"$WORK/bpf"
		fi
		kmond_stop
		echo "bpf round $r $mode: $n requests"
	done
done
bpf_stats_release

echo
echo "connections: $CONNS, $ROUNDS rounds of ${SECS}s per mode, nginx 1 worker; median [min .. max]"
echo "over the rounds. ratio: throughput over the same round's run without kmond; added: wall ns"
echo "per request over it; kmond CPU: its threads' CPU / requests (all: a record per request)."
# shellcheck disable=SC2086
for mode in $MODES; do
	echo "mode $mode: ratio $(median_spread ${ratio[$mode]}), added $(median_spread ${added[$mode]}) ns," \
		"kmond CPU $(median_spread ${cpu[$mode]}) us/request, peak RSS $(median_spread ${hwm[$mode]}) MiB"
done
# shellcheck disable=SC2086
echo "kmond CPU per request (user space, a record each): server side $(median ${cpu[all]}) us," \
	"client side $(median ${cpu[client]}) us; target 0.25"
# shellcheck disable=SC2086
echo "every collector on: throughput ratio $(median ${ratio[every]}) (target >= 0.95)," \
	"peak RSS $(median ${hwm[every]}) MiB (target <= 32); empty programs on its hooks" \
	"(floor-every) $(median ${ratio[floor-every]})"
# shellcheck disable=SC2086
echo "every collector on: BPF time per request $(median_spread ${bpf_every[every]}) ns," \
	"empty programs on its hooks (floor-every) $(median_spread ${bpf_every[floor-every]}) ns" \
	"($(calc "$(median ${bpf_every[every]}) / ($(median ${bpf_every[floor-every]}) + 0.000001)" 2)x)"
for mode in all hash none; do
	# shellcheck disable=SC2086
	echo "mode $mode over the floor: ns per request added $(median ${added[$mode]})" \
		"(floor $(median ${added[floor]}), $(calc "$(median ${added[$mode]}) / ($(median ${added[floor]}) + 0.000001)" 1)x; noisy)"
done
if [ -n "${BPF_KEEP:-}" ]; then cp "$WORK/bpf" "$BPF_KEEP"; fi
python3 bench/tcp_nginx_bpf.py "$WORK/bpf"
