#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact totals of comms kmt_a and kmt_b, which other tests run
# A service added by SIGHUP is counted afterwards and not before, and the
# reload only rewrote control maps: the same BPF programs (ids) before and
# after.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_a"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_b"
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: svc-a
    match: { comm: kmt_a }
$1
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
}
write_config ""
start_kmond "$WORK/kmond.yaml" -v
before=$(prog_ids $KMOND_PID)
[ -n "$before" ] || fail "kmond holds no BPF programs"

"$WORK/kmt_a" 100
"$WORK/kmt_b" 1000 # not selected yet
write_config "  - name: svc-b
    match: { comm: kmt_b }"
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "not reloaded"
"$WORK/kmt_a" 200
"$WORK/kmt_b" 2000
sleep 0.5
after=$(prog_ids $KMOND_PID)
stop_kmond

expect_eq "BPF program ids across the reload" "$after" "$before"
out=$WORK/out.json
expect_eq "svc-a, before and after" "$($RECORDS "$out" --kind syscall --where service=svc-a --sum count)" 300
expect_eq "svc-b, only after" "$($RECORDS "$out" --kind syscall --where service=svc-b --sum count)" 2000
expect_eq "kmt_b records" "$($RECORDS "$out" --kind syscall --where comm=kmt_b --count)" 1
