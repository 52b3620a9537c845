#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmond's start-up: the wall time from exec to ready (its "running on"
# line, which says it: "ready W s after exec, C s of CPU") and the CPU it
# used until then (the BPF verifier runs inside its bpf() calls), per
# collector alone and with every collector (configs/kmond.yaml's set),
# the modes alternating within each round; medians with [min .. max].
# The bench's own clock (exec to the line seen, polled every 10 ms) is
# printed beside kmond's, as a check. KMOND_BEFORE=BINARY runs that build
# too, beside this one in each round (its rows "MODE-before").
#   bench/startup.sh [ROUNDS]  (as root; 5 rounds)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-5}
MODES="syscall drop offcpu bio tcp counters every"
make -s build/kmond || fail "cannot build kmond"
bench_init

config() { # MODE
	if [ "$1" = every ]; then
		sed 's|path: "-"|path: "/dev/null"|' configs/kmond.yaml
		return
	fi
	echo "interval: 1s"
	echo "collectors:"
	case $1 in
	counters) echo "  counters: { tracepoints: [sched:sched_process_fork] }" ;;
	*) echo "  $1: { enabled: true }" ;;
	esac
	echo "exporters: [ { type: file, path: /dev/null } ]"
}

# one MODE [BINARY]: "wall cpu outer" in seconds, or fails
one() {
	local t0 t1 line i
	config "$1" >"$WORK/$1.yaml"
	: >"$WORK/err"
	t0=$(date +%s%N)
	"${2:-build/kmond}" -c "$WORK/$1.yaml" >/dev/null 2>"$WORK/err" &
	KMOND_PID=$!
	for ((i = 0; i < 3000; i++)); do
		line=$(grep -m1 'running on' "$WORK/err") && break
		kill -0 $KMOND_PID 2>/dev/null || fail "$1: $(tail -3 "$WORK/err")"
		sleep 0.01
	done
	t1=$(date +%s%N)
	kmond_stop
	[ -n "$line" ] || fail "$1: not ready after 30 s"
	sed -E 's/.*ready ([0-9.]+) s after exec, ([0-9.]+) s of CPU.*/\1 \2/' <<<"$line" |
		awk -v outer="$(((t1 - t0) / 1000000))" '{ print $1, $2, outer / 1000 }'
}

for ((r = 1; r <= ROUNDS; r++)); do
	for mode in $MODES; do
		one "$mode" >>"$WORK/$mode.runs"
		if [ -n "${KMOND_BEFORE:-}" ]; then
			one "$mode" "$KMOND_BEFORE" >>"$WORK/$mode-before.runs"
		fi
	done
done
printf '%-16s %-24s %-24s %s\n' mode "ready after exec, s" "CPU until ready, s" "bench's clock, s"
for mode in $MODES ${KMOND_BEFORE:+$(printf '%s-before ' $MODES)}; do
	printf '%-16s %-24s %-24s %s\n' "$mode" \
		"$(median_spread $(awk '{ print $1 }' "$WORK/$mode.runs"))" \
		"$(median_spread $(awk '{ print $2 }' "$WORK/$mode.runs"))" \
		"$(median_spread $(awk '{ print $3 }' "$WORK/$mode.runs"))"
done
