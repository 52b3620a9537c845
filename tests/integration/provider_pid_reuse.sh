#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: writes /proc/sys/kernel/ns_last_pid
# A selected process exits and its pid is reused by an unselected process:
# the new process is not attributed to the old service, whether the old
# one was selected by comm or by pid.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_selected"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_bypid"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_intruder"
"$WORK/kmt_bypid" 1000 --wait "$WORK/go1" &
by_pid=$!
STARTED_PIDS+=($by_pid)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: by-comm
    match: { comm: kmt_selected }
  - name: by-pid
    match: { pid: $by_pid }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
start_kmond "$WORK/kmond.yaml"

# Selected by comm: runs, exits, and its pid goes to an intruder.
"$WORK/kmt_selected" 2000 &
comm_pid=$!
wait $comm_pid
got=$("$BUILD/tests/kmt_reuse_pid" $comm_pid "$WORK/kmt_intruder" 3000) ||
	fail "could not reuse pid $comm_pid"
expect_eq "pid reused" "$got" $comm_pid

# Selected by pid: the same.
touch "$WORK/go1"
wait $by_pid
got=$("$BUILD/tests/kmt_reuse_pid" $by_pid "$WORK/kmt_intruder" 4000) ||
	fail "could not reuse pid $by_pid"
expect_eq "pid reused" "$got" $by_pid
sleep 0.7
stop_kmond

out=$WORK/out.json
expect_eq "by-comm count" "$($RECORDS "$out" --kind syscall --where service=by-comm --sum count)" 2000
expect_eq "by-pid count" "$($RECORDS "$out" --kind syscall --where service=by-pid --sum count)" 1000
expect_eq "by-pid comm" "$($RECORDS "$out" --kind syscall --where service=by-pid --values comm | sort -u)" kmt_bypid
expect_eq "by-comm comm" "$($RECORDS "$out" --kind syscall --where service=by-comm --values comm | sort -u)" kmt_selected
expect_eq "intruder records" "$($RECORDS "$out" --kind syscall --where comm=kmt_intruder --count)" 0
