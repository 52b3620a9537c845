#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact totals of comms kmt_a and kmt_b, which other tests run
# --watch: kmond reloads when its config file changes, as a Kubernetes
# ConfigMap volume changes it (the kubelet writes a new timestamped
# directory and swaps the ..data symlink the file points through): a
# service added that way is counted afterwards. A rewrite with the same
# content is no reload; a bad file is refused once and the running config
# stays.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_a"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_b"
DIR=$WORK/configmap
mkdir -p "$DIR"
# configmap VERSION TEXT: what the kubelet does on an update
configmap() {
	mkdir "$DIR/..$1"
	printf '%s\n' "$2" >"$DIR/..$1/kmond.yaml"
	ln -s "..$1" "$DIR/..data_tmp"
	mv -T "$DIR/..data_tmp" "$DIR/..data"
	[ -e "$DIR/kmond.yaml" ] || ln -s ..data/kmond.yaml "$DIR/kmond.yaml"
}
conf() {
	cat <<YAML
interval: 200ms
services:
  - { name: svc-a, match: { comm: kmt_a } }
${1:-}
collectors:
  syscall: { enabled: true, syscalls: [getppid] }
YAML
}
configmap 1 "$(conf)"
start_kmond "$DIR/kmond.yaml" --watch
"$WORK/kmt_a" 100
"$WORK/kmt_b" 1000 # not selected yet

configmap 2 "$(conf "  - { name: svc-b, match: { comm: kmt_b } }")"
rm -rf "$DIR/..1"
wait_for_log "reloaded" 5 || fail "no reload after the ConfigMap changed"
"$WORK/kmt_a" 200
"$WORK/kmt_b" 2000

# the same content again: nothing to do
configmap 3 "$(conf "  - { name: svc-b, match: { comm: kmt_b } }")"
sleep 0.6
# a bad file: refused, svc-b stays
configmap 4 "services: [ oops"
wait_for_log "reload refused" 5 || fail "bad file not refused"
"$WORK/kmt_b" 300
sleep 0.5
stop_kmond

out=$WORK/out.json
expect_eq "svc-a, before and after" "$($RECORDS "$out" --kind syscall --where service=svc-a --sum count)" 300
expect_eq "svc-b, only after the swap" "$($RECORDS "$out" --kind syscall --where service=svc-b --sum count)" 2300
expect_eq "reloads" "$(grep -c "reloaded" "$WORK/kmond.err")" 1
expect_eq "refusals" "$(grep -c "reload refused" "$WORK/kmond.err")" 1
