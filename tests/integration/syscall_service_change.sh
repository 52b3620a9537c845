#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A process already counting syscalls (not selected) that becomes
# selected while it runs, by a selector user space resolves (moved into a
# selected cgroup), is counted from then on: the syscall collector's
# per-CPU slots, filled while it was not monitored, are filled again.
source "$(dirname "$0")/../lib/kmond.sh"

cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg2" ] || fail "no cgroup2 hierarchy mounted"
tag=kmond-test-$$
mkdir "$cg2/$tag" || fail "cannot create a cgroup"
N=8000000
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_moved"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: by-cgroup
    match: { cgroup: "/$tag" }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
start_kmond "$WORK/kmond.yaml"

"$WORK/kmt_moved" $N &
moved=$!
STARTED_PIDS+=($moved)
sleep 0.5
kill -0 $moved || fail "the workload ended before its move"
echo $moved >"$cg2/$tag/cgroup.procs" || fail "cannot move $moved"
moved_ns=$(date +%s%N)
wait $moved
sleep 0.7
stop_kmond
echo $$ >"$cg2/cgroup.procs" 2>/dev/null
rmdir "$cg2/$tag" 2>/dev/null

out=$WORK/out.json
got=$($RECORDS "$out" --kind syscall --where pid=$moved --where service=by-cgroup --sum count)
[ "${got:-0}" -gt 0 ] || fail "not counted after its move (got '$got')"
[ "$got" -lt $N ] || fail "counted before its move too ($got of $N)"
before=$($RECORDS "$out" --kind syscall --where pid=$moved --values ts |
	awk -v t="$moved_ns" '$1 < t - 400000000' | wc -l)
expect_eq "records an interval before the move" "$before" 0
echo "ok: $got of $N getppid counted after the move"
