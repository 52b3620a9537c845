#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A chosen attach method that the kernel refuses at load (kernels 5.11-5.15
# have tp_btf sched_switch but not what offcpu's tp_btf program needs) gives
# way to the next method, in every collector: KMOND_PROBE_FAIL_LOAD makes the
# kernel refuse the named programs. --probe reports what loaded, and the
# collectors run and count on their fallbacks.
source "$(dirname "$0")/../lib/kmond.sh"

export KMOND_PROBE_FAIL_LOAD=tp_btf:sched_switch,tp_btf:block_rq_issue,tp_btf:sock_recv_length
"$KMOND" --probe >"$WORK/probe" 2>"$WORK/probe.err"
expect_eq "exit code of --probe" $? 0
tcp_wants=(
	"^tcp +sock_recv +tracepoint sock/sock_recv_length; tp_btf: [a-z_]+ failed to load: "
	"^tcp +sock_send +tp_btf sock_send_length")
# Before 6.3 there is no sock_recv_length to refuse: tcp is on its
# syscall fallback anyway.
[ -d /sys/kernel/tracing/events/sock/sock_recv_length ] || tcp_wants=(
	"^tcp +sock_recv +raw_tp sys_exit"
	"^tcp +sock_send +raw_tp sys_exit")
for want in \
	"^offcpu +sched_switch +raw_tp sched_switch; tp_btf: offcpu_switch_btf failed to load: " \
	"^bio +rq_issue +raw_tp block_rq_issue; tp_btf: [a-z_]+ failed to load: " \
	"^bio +rq_complete +tp_btf block_rq_complete" \
	"${tcp_wants[@]}"; do
	grep -Eq "$want" "$WORK/probe" ||
		fail "--probe has no line /$want/: $(cat "$WORK/probe" "$WORK/probe.err")"
done
echo "ok: --probe names the methods that loaded"
grep -q "offcpu: sched_switch: tp_btf sched_switch failed to load (.*); trying the next method" \
	"$WORK/probe.err" || fail "no warning about the refused load: $(cat "$WORK/probe.err")"
echo "ok: the refused load is logged"

# offcpu counts on each method that loaded in place of refused ones: a
# sleeper's 20 blocks are there (how long each took is the timing tests'
# business, not this one's), all but one at most. A sleep can pass with
# the sleeper runnable, not asleep: preempted (or its vCPU not run by
# the host) between setting its state and schedule() for longer than
# the sleep, it finds its timer fired and does not sleep, and no block
# begins. The kernel side counted 19 in 1 of 3 runs of the sanitizer
# build (kmond busier), 20 in 4 of 4 of the plain one; offcpu_sleep
# allows 2 of 40 too.
cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_loadfail"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: sleeper
    match: { comm: kmt_loadfail }
collectors:
  offcpu: { enabled: true, state: sleep, min_block: 1ms }
YAML
for refused in tp_btf:sched_switch:raw_tp tp_btf:sched_switch,raw_tp:sched_switch:tracepoint; do
	export KMOND_PROBE_FAIL_LOAD=${refused%:*}
	want=${refused##*:}
	start_kmond "$WORK/kmond.yaml"
	grep -q "collector offcpu: running ($want)" "$WORK/kmond.err" ||
		fail "offcpu does not run on $want: $(grep offcpu "$WORK/kmond.err")"
	"$WORK/kmt_loadfail" 20 20 || fail "sleeper failed"
	sleep 0.7
	stop_kmond
	got=$($RECORDS "$WORK/out.json" --kind offcpu --where service=sleeper --sum count)
	[ "${got:-0}" -ge 19 ] || fail "offcpu on $want: $got blocks of the sleeper, want 20 (19)"
	echo "ok: offcpu on $want after $KMOND_PROBE_FAIL_LOAD failed to load: $got blocks"
done
KMOND_PROBE_FAIL_LOAD=tp_btf:block_io_start,tp_btf:block_rq_insert,tp_btf:block_rq_issue,tp_btf:block_rq_complete \
	EXPECT_ATTACH=raw_tp bash "$(dirname "$0")/bio_dd.sh" || fail "bio on raw_tp after tp_btf failed to load"
echo "ok: bio counts on raw_tp after tp_btf failed to load"
