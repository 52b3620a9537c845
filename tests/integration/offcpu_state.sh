#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# state: two CPU burners sharing one CPU never sleep, they are only
# preempted: off-CPU time for `state: all`, none for `state: sleep`. A
# reload switches between them.
source "$(dirname "$0")/../lib/kmond.sh"

command -v taskset >/dev/null || fail "taskset (util-linux) is missing"
taskset -c 0 bash -c 'while :; do :; done' &
a=$!
taskset -c 0 bash -c 'while :; do :; done' &
b=$!
STARTED_PIDS+=("$a" "$b")
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: burner
    match: { pid: $a }
  - name: burner
    match: { pid: $b }
collectors:
  offcpu: { enabled: true, state: $1 }
YAML
}
write_config sleep
start_kmond "$WORK/kmond.yaml"
sleep 1.5
cp "$WORK/out.json" "$WORK/phase1.json"
write_config all
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" || fail "not reloaded"
sleep 1.5
stop_kmond

expect_eq "state sleep: off-CPU blocks of preempted burners" \
	"$($RECORDS "$WORK/phase1.json" --kind offcpu --where service=burner --sum count)" 0
n=$($RECORDS "$WORK/out.json" --kind offcpu --where service=burner --sum count)
ns=$($RECORDS "$WORK/out.json" --kind offcpu --where service=burner --sum total_ns)
[ "$n" -ge 10 ] || fail "state all: $n blocks of preempted burners, want many"
# two burners on one CPU: each waits about half the time
[ "$ns" -ge 800000000 ] || fail "state all: $ns ns off-CPU, want ~1.5 s"
echo "ok: state all: $n preemptions, $ns ns off-CPU"
