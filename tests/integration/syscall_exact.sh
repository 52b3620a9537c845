#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: the first record within 600 ms of the calls
# A selected process started after kmond that calls getppid exactly N times
# is counted exactly N times under its service, in the interval it ran; a
# process that is not selected does not appear at all.
source "$(dirname "$0")/../lib/kmond.sh"

N=12345
M=777
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_other"
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: probe-svc
    match: { comm: kmt_getppid }
collectors:
  syscall: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

"$WORK/kmt_getppid" $N &
selected=$!
"$WORK/kmt_other" $M &
other=$!
wait $selected $other
done_ns=$(date +%s%N)
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
got=$($RECORDS "$out" --kind syscall --where pid=$selected --where syscall=getppid --sum count)
expect_eq "getppid count of the selected process" "$got" $N
services=$($RECORDS "$out" --kind syscall --where pid=$selected --values service | sort -u)
expect_eq "its service" "$services" probe-svc
comms=$($RECORDS "$out" --kind syscall --where pid=$selected --values comm | sort -u)
expect_eq "its comm" "$comms" kmt_getppid
others=$($RECORDS "$out" --kind syscall --where pid=$other --count)
expect_eq "records of the unselected process" "$others" 0
others=$($RECORDS "$out" --kind syscall --where comm=kmt_other --count)
expect_eq "records with the unselected comm" "$others" 0
unselected=$($RECORDS "$out" --kind syscall --where service=null --count)
expect_eq "records without a service" "$unselected" 0

# Picked up within one interval: the getppid record is emitted at the end
# of the interval the calls happened in (500 ms), not later.
first_ts=$($RECORDS "$out" --kind syscall --where pid=$selected --where syscall=getppid --values ts | sort -n | head -1)
lag_ms=$(((first_ts - done_ns) / 1000000))
[ "$lag_ms" -le 600 ] || fail "first record came ${lag_ms} ms after the calls ended"
echo "ok: recorded ${lag_ms} ms after the calls ended"
