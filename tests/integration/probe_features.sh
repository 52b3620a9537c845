#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A program that only adds a feature never takes its collector down: with
# each optional program refused (KMOND_PROBE_FAIL_LOAD makes the kernel
# refuse it at load), one at a time and all at once, every collector runs,
# each feature lost is one warning line naming it and the kernel's answer,
# libbpf's own lines stay out of the log, --probe says "off (...)", and the
# stats record lists it. A feature with a second way takes it instead:
# probe_no_iter.sh, every iterator refused.
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: web
    match: { port: $PORT }
collectors:
  syscall: { enabled: true }
  drop: { enabled: true }
  offcpu: { enabled: true, min_block: 1ms }
  bio: { enabled: true }
  tcp: { enabled: true }
  counters: { enabled: true, tracepoints: [sched:sched_process_fork] }
YAML

# run_refused ENTRIES COLLECTOR:HOOK...: starts kmond with ENTRIES
# refused; each COLLECTOR:HOOK must be off, said once, listed in stats
# (and by --probe, with PROBE=1: the run of every entry at once asks it,
# and those of entries outside it; the others leave it out for time).
run_refused() {
	local entries=$1 want c h lines
	shift
	export KMOND_PROBE_FAIL_LOAD=$entries
	start_kmond "$WORK/kmond.yaml"
	sleep 0.7
	stop_kmond
	for c in syscall drop offcpu bio tcp counters; do
		grep -q "collector $c: running" "$WORK/kmond.err" ||
			fail "$entries refused: $c does not run: $(cat "$WORK/kmond.err")"
	done
	grep -q 'libbpf' "$WORK/kmond.err" &&
		fail "$entries refused: libbpf's lines in the log: $(grep libbpf "$WORK/kmond.err")"
	[ "${PROBE:-0}" = 1 ] && "$KMOND" --probe >"$WORK/probe" 2>/dev/null
	for want in "$@"; do
		c=${want%%:*} h=${want#*:}
		lines=$(grep -c "warning: $c: $h off (.*): .*" "$WORK/kmond.err")
		[ "$lines" = 1 ] ||
			fail "$entries refused: $lines warnings for $c $h: $(cat "$WORK/kmond.err")"
		[ "${PROBE:-0}" = 1 ] && ! grep -Eq "^$c +$h +off \(" "$WORK/probe" &&
			fail "$entries refused: --probe has no '$c $h off': $(grep "^$c" "$WORK/probe")"
		[ "$c" = provider ] && continue
		$RECORDS "$WORK/out.json" --kind stats --values collectors.$c.features_off |
			tail -1 | grep -q "'$h'" ||
			fail "$entries refused: stats do not list $c $h: $($RECORDS "$WORK/out.json" --kind stats --values collectors.$c.features_off | tail -1)"
	done
	echo "ok: $entries refused: every collector runs; off: $*"
	unset KMOND_PROBE_FAIL_LOAD
}

PROBE=1 run_refused iter:bpf_sk_storage_map # a second way: no feature lost
grep -q "warning" "$WORK/kmond.err" &&
	fail "a feature with a second way warned: $(grep warning "$WORK/kmond.err")"
grep -Eq '^tcp +flush +run conns' "$WORK/probe" ||
	fail "--probe: flush is not on its run: $(grep flush "$WORK/probe")"
echo "ok: tcp flushes by its run where the iterator is refused, silently"
run_refused iter:bpf_sk_storage_map,run:conns tcp:flush
run_refused run:syscall tcp:batches
run_refused cgroup:cgroup_skb/ingress tcp:proto_in
run_refused tp_btf:tcp_sendmsg_locked,raw_tp:sys_enter tcp:tcp_sendmsg
run_refused tcp_fork_btf,tcp_fork_tp tcp:sched_fork
run_refused run:bio_inflight bio:lost_walk
run_refused iter:task_file drop:seed_owners
run_refused block_rq_insert,block/block_rq_insert bio:rq_insert
run_refused cgroup_attach_task provider:cgroup
if [ -d /sys/kernel/tracing/events/block/block_io_start ]; then
	PROBE=1 run_refused block_io_start,block/block_io_start bio:io_start
fi
all=iter,run,cgroup,tp_btf:tcp_sendmsg_locked,raw_tp:sys_enter
all+=,tcp_fork_btf,tcp_fork_tp
all+=,block_rq_insert,block/block_rq_insert,cgroup_attach_task
PROBE=1 run_refused $all tcp:flush tcp:batches tcp:proto_in tcp:tcp_sendmsg \
	tcp:sched_fork bio:lost_walk drop:seed_owners bio:rq_insert provider:cgroup
features=$($RECORDS "$WORK/out.json" --kind stats --values features_off | tail -1)
[ "$features" -ge 9 ] || fail "stats count $features features off, want 9 or more"
echo "ok: stats count $features features off"
