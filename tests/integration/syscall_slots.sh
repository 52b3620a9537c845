#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact totals of comm kmt_getppid, which other tests run
# The syscall collector counts in per-CPU slots, moved into its map when
# a slot changes hands: every count still comes out exactly once. Here a
# selected process forks and reaps selected children without pause (each
# fork and exit changes pid_service, so every slot is filled again on its
# next syscall) while a long storm runs beside many short processes that
# exit with their counts still in the slots. On the fallbacks too
# (KMOND_PROBE_DENY), which count the same way.
source "$(dirname "$0")/../lib/kmond.sh"

STORM=2000000
SHORT=40
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
cp "$BUILD/tests/kmt_fork" "$WORK/kmt_forker"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: counted
    match: { comm: kmt_getppid }
  - name: forker
    match: { comm: kmt_forker }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML

run() { # $1: the attach method expected
	start_kmond "$WORK/kmond.yaml"
	grep -q "collector syscall: running ($1)" "$WORK/kmond.err" ||
		fail "syscall does not run on $1: $(grep syscall "$WORK/kmond.err")"
	"$WORK/kmt_forker" 1500 &
	local forker=$! storm a b i
	"$WORK/kmt_getppid" $STORM &
	storm=$!
	: >"$WORK/short.pids"
	# two at a time, so they run on both CPUs
	for ((i = 1; i <= SHORT; i += 2)); do
		"$WORK/kmt_getppid" $((i * 101)) &
		a=$!
		"$WORK/kmt_getppid" $(((i + 1) * 101)) &
		b=$!
		printf '%s %s\n%s %s\n' $a $((i * 101)) $b $(((i + 1) * 101)) >>"$WORK/short.pids"
		wait $a $b
	done
	wait $storm $forker
	sleep 1 # three intervals
	stop_kmond

	local out=$WORK/out.json got
	got=$($RECORDS "$out" --kind syscall --where pid=$storm --sum count)
	expect_eq "$1: the storm's count" "$got" $STORM
	got=$(python3 - "$out" "$WORK/short.pids" <<'PY'
import collections, json, sys
counts = collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "syscall":
        counts[r["pid"]] += r["count"]
bad = 0
for line in open(sys.argv[2]):
    pid, n = map(int, line.split())
    if counts[pid] != n:
        print(f"pid {pid}: {counts[pid]}, want {n}", file=sys.stderr)
        bad += 1
print(bad)
PY
)
	expect_eq "$1: short processes counted wrong" "$got" 0
	got=$($RECORDS "$out" --kind syscall --where service=counted --sum count)
	expect_eq "$1: all counted" "$got" $((STORM + 101 * SHORT * (SHORT + 1) / 2))
}

run tp_btf
export KMOND_PROBE_DENY=tp_btf:sys_enter
run raw_tp
ran="tp_btf and raw_tp"
# The tracepoint, last of the fallbacks, counts exactly but where the
# kernel skips its runs: on PREEMPT_RT a preempted task that holds
# bpf_prog_active on a CPU (kmond's own map operations do) makes it skip
# every syscall of the task that runs there meanwhile (counted missed
# since 6.7; bpf/syscall.bpf.c: why raw_tp comes first).
if uname -v | grep -q PREEMPT_RT; then
	echo "not run: the tracepoint on PREEMPT_RT ($(uname -r)), whose runs the kernel skips"
else
	export KMOND_PROBE_DENY=tp_btf:sys_enter,raw_tp:sys_enter
	run tracepoint
	ran="tp_btf, raw_tp and the tracepoint"
fi
echo "ok: exact through slot refills, on $ran"
