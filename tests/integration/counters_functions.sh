#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Functions counted exactly, on each way this kernel allows to hook them
# (fentry, then kprobe with fentry denied): a selected process connect()ing
# N times to a closed loopback port counts N tcp_connect, one forking M
# children counts M kernel_clone, each under its own service
# (the attach cookie tells the events apart). Skipped, naming the reasons,
# on a kernel that allows neither (this machine's 6.18: no kprobes, fentry
# refused).
source "$(dirname "$0")/../lib/kmond.sh"

N=50
M=200
PORT=$(test_port)
cp "$BUILD/tests/kmt_syn" "$WORK/kmt_syn"
cp "$BUILD/tests/kmt_fork" "$WORK/kmt_fork"
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: connector
    match: { comm: kmt_syn }
  - name: forker
    match: { comm: kmt_fork }
collectors:
  counters:
    functions: [tcp_connect, kernel_clone]
    required: true
YAML

fn_line=$("$KMOND" --probe | grep -E '^counters +functions ') ||
	fail "--probe has no counters functions line"
case "$fn_line" in
*" off ("*) skip "neither fentry nor kprobe: ${fn_line#*counted); }" ;;
esac
methods=()
[[ "$fn_line" =~ ^counters\ +functions\ +fentry ]] && methods+=(fentry)
if [ -e /sys/bus/event_source/devices/kprobe/type ]; then
	methods+=(kprobe)
else
	echo "not tested: kprobe (no kprobe PMU on this kernel)"
fi

# count_on METHOD: the counts with kmond hooking functions by METHOD.
count_on() {
	local method=$1 deny= out c connector forker
	[ "$method" = kprobe ] && deny=fentry:tcp_connect
	KMOND_PROBE_DENY=$deny start_kmond "$WORK/kmond.yaml"
	for f in tcp_connect kernel_clone; do
		grep -q "counters: counting function $f ($method)" "$WORK/kmond.err" ||
			fail "$f is not counted by $method"
	done
	"$WORK/kmt_syn" closed 127.0.0.1 "$PORT" $N &
	connector=$!
	"$WORK/kmt_fork" $M &
	forker=$!
	wait $connector || fail "kmt_syn closed"
	wait $forker || fail "kmt_fork"
	sleep 1.2
	stop_kmond
	out=$WORK/out.json
	$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
	c=(--kind counter)
	expect_eq "$method: tcp_connect of the connector" \
		"$($RECORDS "$out" "${c[@]}" --where pid=$connector --where event=tcp_connect --sum count)" $N
	expect_eq "$method: its service" \
		"$($RECORDS "$out" "${c[@]}" --where pid=$connector --values service | sort -u)" connector
	expect_eq "$method: kernel_clone of the forker" \
		"$($RECORDS "$out" "${c[@]}" --where pid=$forker --where event=kernel_clone --sum count)" $M
	expect_eq "$method: its service" \
		"$($RECORDS "$out" "${c[@]}" --where pid=$forker --values service | sort -u)" forker
	expect_eq "$method: tcp_connect of the forker" \
		"$($RECORDS "$out" "${c[@]}" --where pid=$forker --where event=tcp_connect --count)" 0
	expect_eq "$method: counter records without a service" \
		"$($RECORDS "$out" "${c[@]}" --where service=null --count)" 0
	rm -f "$out" "$WORK/kmond.err"
}

for m in "${methods[@]}"; do
	count_on "$m"
done
