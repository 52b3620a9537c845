#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A collector switched off and on again by SIGHUP stops and resumes its
# records, while another collector keeps producing its own throughout
# with the same BPF program.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_toggle"
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: toggle
    match: { comm: kmt_toggle }
collectors:
  syscall: { enabled: $1, syscalls: [getppid] }
  counters: { tracepoints: [syscalls:sys_enter_getppid] }
YAML
}
# phase N: run N getppid calls and let one interval pass
phase() {
	"$WORK/kmt_toggle" "$1"
	sleep 0.5
}
counter_prog() {
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("prog_id:")}
for p in json.load(sys.stdin):
    if p["id"] in ids and p.get("name", "").startswith("counters"):
        print(p["id"])' <(grep -h '^prog_id:' /proc/$KMOND_PID/fdinfo/*)
}

write_config true
start_kmond "$WORK/kmond.yaml"
prog_before=$(counter_prog)
[ -n "$prog_before" ] || fail "no counters program"
phase 100
write_config false
kill -HUP $KMOND_PID
wait_for_log "collector syscall: stopped" || fail "syscall not stopped"
phase 200
write_config true
kill -HUP $KMOND_PID
wait_for_log_count "collector syscall: running" 2 || fail "syscall not started again"
phase 400
prog_after=$(counter_prog)
stop_kmond

out=$WORK/out.json
expect_eq "syscall: on, off, on again" "$($RECORDS "$out" --kind syscall --where service=toggle --sum count)" 500
expect_eq "counters: on throughout" "$($RECORDS "$out" --kind counter --where service=toggle --sum count)" 700
expect_eq "counters program id" "$prog_after" "$prog_before"
