#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Tracepoints counted exactly, per process and under the right event name:
# a selected process forking exactly N children counts N
# sched:sched_process_fork, one calling getppid M times counts M
# syscalls:sys_enter_getppid (the same program serves both: the attach
# cookie tells them apart). Functions on a kernel without fentry or kprobes,
# and a tracepoint this kernel lacks, are warnings naming them, and the
# other collectors keep producing records. A reload that changes the list
# re-attaches only the counters' links: same program id, the dropped event
# stops counting, the kept one goes on, the added one counts.
source "$(dirname "$0")/../lib/kmond.sh"

N=123
M=4567
cp "$BUILD/tests/kmt_fork" "$WORK/kmt_fork"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"

# write_config TRACEPOINTS...
write_config() {
	local list
	list=$(IFS=,; echo "$*")
	cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: forker
    match: { comm: kmt_fork }
  - name: caller
    match: { comm: kmt_getppid }
collectors:
  syscall: { syscalls: [getppid] }
  counters:
    tracepoints: [$list]
    functions: [tcp_connect]
YAML
}

# Functions: visible in --probe, with the reasons.
"$KMOND" --probe >"$WORK/probe"
grep -Eq '^drop +kfree_skb +(tp_btf|tracepoint) ' "$WORK/probe" ||
	fail "--probe has no drop line: $(cat "$WORK/probe")"
grep -Eq '^counters +tracepoints +tracepoint ' "$WORK/probe" ||
	fail "--probe has no counters tracepoint line"
fn_line=$(grep -E '^counters +functions ' "$WORK/probe") ||
	fail "--probe has no counters functions line"
echo "ok: --probe: $fn_line"
fentry_ok=0
[ -e /sys/bus/event_source/devices/kprobe/type ] && fentry_ok=1
if [ $fentry_ok = 0 ] && ! grep -q 'off (kernel functions are not counted); fentry: .*; kprobe: kprobes are not available' <<<"$fn_line"; then
	fail "--probe does not say why functions cannot be counted: $fn_line"
fi

write_config sched:sched_process_fork syscalls:sys_enter_getppid nosuch:event
start_kmond "$WORK/kmond.yaml"
grep -q "counters: tracepoint nosuch:event does not exist on this kernel" "$WORK/kmond.err" ||
	fail "no warning naming the missing tracepoint"
echo "ok: warned about nosuch:event"
if [ $fentry_ok = 0 ]; then
	grep -q "counters: functions \[tcp_connect\] are not counted: this kernel allows neither fentry nor kprobes" "$WORK/kmond.err" ||
		fail "no warning about functions"
	echo "ok: warned that functions are not counted"
fi
# The id of kmond's own counters_tp program (other kmonds may be running):
# from the bpf-prog fds kmond holds.
prog_id() {
	local fd id ids=()
	for fd in /proc/$KMOND_PID/fd/*; do
		[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
		id=$(awk '/^prog_id:/ { print $2 }' "/proc/$KMOND_PID/fdinfo/${fd##*/}")
		bpftool prog show id "$id" | grep -q " name counters_tp " && ids+=("$id")
	done
	[ ${#ids[@]} -eq 1 ] && echo "${ids[0]}" || echo none
}
id_before=$(prog_id)
[ "$id_before" != none ] || fail "cannot find kmond's counters_tp program"

"$WORK/kmt_fork" $N &
forker=$!
"$WORK/kmt_getppid" $M &
caller=$!
wait $forker || fail "kmt_fork"
wait $caller || fail "kmt_getppid"
sleep 1.2

# Reload: sched_process_fork goes, sys_enter_getppid stays,
# sys_exit_getppid comes.
write_config syscalls:sys_enter_getppid syscalls:sys_exit_getppid nosuch:event
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" || fail "no reload"
grep -q "counters: no longer counting sched:sched_process_fork" "$WORK/kmond.err" ||
	fail "fork tracepoint not detached on reload"
got=$(grep -c "counters: tracepoint nosuch:event does not exist" "$WORK/kmond.err")
expect_eq "warnings about nosuch:event (start and reload)" "$got" 2
id_after=$(prog_id)
expect_eq "counters_tp program id across the reload" "$id_after" "$id_before"
"$WORK/kmt_fork" $N &
forker2=$!
"$WORK/kmt_getppid" $M &
caller2=$!
wait $forker2 || fail "kmt_fork"
wait $caller2 || fail "kmt_getppid"
sleep 1.2
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
c=(--kind counter)
got=$($RECORDS "$out" "${c[@]}" --where pid=$forker --where event=sched:sched_process_fork --sum count)
expect_eq "forks counted" "$got" $N
got=$($RECORDS "$out" "${c[@]}" --where pid=$forker --values service | sort -u)
expect_eq "forker's service" "$got" forker
got=$($RECORDS "$out" "${c[@]}" --where pid=$caller --where event=syscalls:sys_enter_getppid --sum count)
expect_eq "getppid tracepoint counted" "$got" $M
got=$($RECORDS "$out" "${c[@]}" --where pid=$caller --where event=sched:sched_process_fork --count)
expect_eq "fork records of the getppid caller" "$got" 0
got=$($RECORDS "$out" "${c[@]}" --where service=null --count)
expect_eq "counter records without a service" "$got" 0
got=$($RECORDS "$out" "${c[@]}" --where event=nosuch:event --count)
expect_eq "records of the missing tracepoint" "$got" 0
# after the reload
got=$($RECORDS "$out" "${c[@]}" --where pid=$forker2 --where event=sched:sched_process_fork --count)
expect_eq "records of forks after the tracepoint was dropped" "$got" 0
got=$($RECORDS "$out" "${c[@]}" --where pid=$caller2 --where event=syscalls:sys_exit_getppid --sum count)
expect_eq "tracepoint added on reload counted" "$got" $M
got=$($RECORDS "$out" "${c[@]}" --where pid=$caller --where event=syscalls:sys_exit_getppid --count)
expect_eq "records of it before the reload" "$got" 0
got=$($RECORDS "$out" "${c[@]}" --where pid=$caller2 --where event=syscalls:sys_enter_getppid --sum count)
expect_eq "getppid tracepoint counted after the reload" "$got" $M
# the other collectors kept running
got=$($RECORDS "$out" --kind syscall --where pid=$caller --where syscall=getppid --sum count)
expect_eq "syscall collector beside counters" "$got" $M

# required: true makes functions that cannot be counted fatal at start.
if [ $fentry_ok = 0 ]; then
	sed -i 's/    functions: \[tcp_connect\]/    functions: [tcp_connect]\n    required: true/' "$WORK/kmond.yaml"
	"$KMOND" -c "$WORK/kmond.yaml" --duration 1 >/dev/null 2>"$WORK/req.err"
	expect_eq "exit code with required uncountable functions" $? 1
	grep -q "collector counters is not running" "$WORK/req.err" ||
		fail "no reason given: $(cat "$WORK/req.err")"
	"$KMOND" -c "$WORK/kmond.yaml" --check >/dev/null 2>"$WORK/check.err"
	expect_eq "--check exit code with required uncountable functions" $? 1
	grep -q "counters: functions: no attach method works (required)" "$WORK/check.err" ||
		fail "--check gives no reason: $(cat "$WORK/check.err")"
fi
