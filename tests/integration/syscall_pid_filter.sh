#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A pid selector picks a process that predates kmond (found by the start-up
# /proc scan), and a syscall list restricts counting to those syscalls.
source "$(dirname "$0")/../lib/kmond.sh"

N=5000
"$BUILD/tests/kmt_getppid" $N --wait "$WORK/go" &
target=$!
STARTED_PIDS+=($target)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: by-pid
    match: { pid: $target }
collectors:
  syscall: { enabled: true, syscalls: [getppid, exit_group] }
YAML
start_kmond "$WORK/kmond.yaml"
touch "$WORK/go"
wait $target
sleep 0.8
stop_kmond

out=$WORK/out.json
got=$($RECORDS "$out" --kind syscall --where pid=$target --where syscall=getppid --sum count)
expect_eq "getppid count of the pid-selected process" "$got" $N
got=$($RECORDS "$out" --kind syscall --where pid=$target --where syscall=exit_group --sum count)
expect_eq "exit_group count" "$got" 1
names=$($RECORDS "$out" --kind syscall --values syscall | sort -u | tr '\n' ' ')
expect_eq "syscalls recorded (the list restricts)" "$names" "exit_group getppid "
services=$($RECORDS "$out" --kind syscall --values service | sort -u)
expect_eq "services recorded" "$services" by-pid
