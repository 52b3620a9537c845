#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# exe (glob), cgroup (path prefix) and container (id from a Docker-style
# cgroup) selectors pick processes started after kmond; a process that
# matches several selectors belongs to the first.
source "$(dirname "$0")/../lib/kmond.sh"

cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg2" ] || fail "no cgroup2 hierarchy mounted"
id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
tag=kmond-test-$$
mkdir "$cg2/$tag" "$cg2/$tag/docker-$id.scope" || fail "cannot create cgroups"
remove_cgroups() {
	rmdir "$cg2/$tag/docker-$id.scope" "$cg2/$tag" 2>/dev/null
}

mkdir -p "$WORK/bin"
cp "$BUILD/tests/kmt_getppid" "$WORK/bin/kmt_exe"
cp "$BUILD/tests/kmt_getppid" "$WORK/bin/kmt_both"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_cg"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_ct"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: by-exe
    match: { exe: "$WORK/bin/*" }
  - name: by-comm
    match: { comm: kmt_both }
  - name: by-container
    match: { container: "${id:0:12}" }
  - name: by-cgroup
    match: { cgroup: "/$tag" }
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
start_kmond "$WORK/kmond.yaml"

# exe: selected from /proc right after exec, before the helper's loop
# (it first waits for the go file).
"$WORK/bin/kmt_exe" 1111 --wait "$WORK/go" &
exe=$!
"$WORK/bin/kmt_both" 2222 --wait "$WORK/go" &
both=$!
# cgroup and container: moved in after start, as a runtime would.
"$WORK/kmt_cg" 3333 --wait "$WORK/go" &
cg=$!
"$WORK/kmt_ct" 4444 --wait "$WORK/go" &
ct=$!
STARTED_PIDS+=($exe $both $cg $ct)
echo $cg >"$cg2/$tag/cgroup.procs" || fail "cannot move $cg"
echo $ct >"$cg2/$tag/docker-$id.scope/cgroup.procs" || fail "cannot move $ct"
sleep 0.3
touch "$WORK/go"
wait $exe $both $cg $ct
sleep 0.7
stop_kmond
remove_cgroups

out=$WORK/out.json
expect_eq "exe glob" "$($RECORDS "$out" --kind syscall --where pid=$exe --where service=by-exe --sum count)" 1111
expect_eq "first selector wins" "$($RECORDS "$out" --kind syscall --where pid=$both --where service=by-exe --sum count)" 2222
expect_eq "cgroup prefix" "$($RECORDS "$out" --kind syscall --where pid=$cg --where service=by-cgroup --sum count)" 3333
expect_eq "container id" "$($RECORDS "$out" --kind syscall --where pid=$ct --where service=by-container --sum count)" 4444
