#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Kmon paper's table on the demo shop (demo/): the shop's response
# time as its users see it (demo/loadgen.py: open loop, every request's
# latency from its arrival) without kmond (off), with kmond (on: every
# collector of the shipped config and the shop's services, records to a
# file) and with the floor (empty programs on each hook of those
# collectors, bench/floor_every.bpf.c: what no kmond can go below),
# alternating in rounds on one running shop; kmond's CPU (as a share of
# the node, and per request) and its peak memory. The paper: Online
# Boutique on four nodes, 100 k6 users: mean 348.97 ms without Kmon,
# 361.97 ms with (+3.7%), P95 784.09 against 790.09 (+0.8%), Kmon 9.55%
# CPU and 616 MiB a node.
#   sudo bench/demo-overhead.sh      (after make; holds nothing: run it
#                                     when the machine is otherwise quiet)
# Environment: ROUNDS (default 6), ROUND_SECONDS (default 40), RATE (user
# actions a second, default 15, from the paper's 100 users), FAULT_MS
# (shipping's fault, default 0: the shop as it is), BUILD (default build).
# The load average (/proc/loadavg) is noted at each round's end: the
# machine may be shared.
cd "$(dirname "$0")/.."
source tests/lib/kmond.sh
source tests/lib/container.sh
source tests/lib/netns.sh
FAULT_MS=${FAULT_MS:-0}
source demo/shop.sh
trap 'container_cleanup; netns_cleanup' EXIT

ROUNDS=${ROUNDS:-6}
ROUND_SECONDS=${ROUND_SECONDS:-40}
RATE=${RATE:-15}
TICK=$(getconf CLK_TCK)
make -s build/bench/floor_load || fail "cannot build build/bench/floor_load"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ivmlinux/x86 -c bench/floor_every.bpf.c \
	-o "$WORK/floor_every.o" || fail "cannot build bench/floor_every.bpf.c"
FLOOR_PID=
floor_start() {
	build/bench/floor_load "$WORK/floor_every.o" >"$WORK/floor.out" 2>&1 &
	FLOOR_PID=$!
	STARTED_PIDS+=($FLOOR_PID)
	until grep -q attached "$WORK/floor.out"; do
		kill -0 $FLOOR_PID 2>/dev/null || fail "floor_load: $(cat "$WORK/floor.out")"
		sleep 0.1
	done
}
floor_stop() {
	kill -TERM $FLOOR_PID
	wait $FLOOR_PID || fail "floor_load exited with $?"
}
container_ready
echo "demo-overhead: $ROUNDS rounds of ${ROUND_SECONDS}s at $RATE user actions/s, $(nproc) CPUs, load $(cat /proc/loadavg)"
shop_start
{
	shop_kmond_config
	echo "exporters:"
	echo "  - { type: file, path: \"$WORK/records.json\" }"
} >"$WORK/kmond.yaml"
# warm the shop (connections, caches, PostgreSQL's plans) unmeasured
shop_load "$RATE" 10 "$WORK/warm.jsonl" >/dev/null

for ((r = 1; r <= ROUNDS; r++)); do
	# rotate which mode goes first: drift in the machine's load falls
	# on each
	case $((r % 3)) in
	1) modes="off on floor" ;;
	2) modes="on floor off" ;;
	0) modes="floor off on" ;;
	esac
	for mode in $modes; do
		if [ $mode = on ]; then
			start_kmond "$WORK/kmond.yaml"
			t0=$(awk '{ print $14 + $15 }' /proc/$KMOND_PID/stat)
		fi
		[ $mode = floor ] && floor_start
		w0=$(date +%s.%N)
		shop_load "$RATE" "$ROUND_SECONDS" "$WORK/$mode-$r.jsonl" >"$WORK/$mode-$r.json"
		w1=$(date +%s.%N)
		cpu=- hwm=-
		if [ $mode = on ]; then
			t1=$(awk '{ print $14 + $15 }' /proc/$KMOND_PID/stat)
			hwm=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$KMOND_PID/status)
			cpu=$(awk -v a=$t0 -v b=$t1 -v t=$TICK 'BEGIN { print (b - a) / t }')
			stop_kmond
		fi
		[ $mode = floor ] && floor_stop
		load=$(cut -d' ' -f1 /proc/loadavg)
		echo "$r $mode $(awk -v a=$w0 -v b=$w1 'BEGIN { print b - a }') $cpu $hwm $load" >>"$WORK/rounds"
		echo "round $r $mode: $(cut -c1-90 "$WORK/$mode-$r.json") cpu ${cpu}s hwm ${hwm}KiB load $load"
	done
done
python3 bench/demo_table.py "$WORK" "$(nproc)"
