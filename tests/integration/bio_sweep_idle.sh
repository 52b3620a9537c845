#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The bio collector walks its in-flight map (for requests never seen to
# complete) only while it may hold something: not while no followed I/O
# has run since a walk found the map empty; again once a followed process
# does I/O; and not once that I/O is over and a walk found the map empty.
# The walks are counted by the lost iterator's runs (bio_find_lost's
# run_cnt, kept while kernel.bpf_stats_enabled is on): each walk runs it
# at least once, at its end.
source "$(dirname "$0")/../lib/kmond.sh"

STATS=/proc/sys/kernel/bpf_stats_enabled
[ -w $STATS ] || skip "no $STATS"
old_stats=$(cat $STATS)
trap 'echo "$old_stats" >$STATS; cleanup' EXIT
echo 1 >$STATS

# The one followed process: writes 8 MiB with O_DIRECT on go, says done.
bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	dd if=/dev/zero of="$1/file" bs=1M count=8 oflag=direct 2>/dev/null
	touch "$1/done"
	while :; do sleep 1; done' _ "$WORK" &
writer=$!
STARTED_PIDS+=($writer)
cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: writer
    match: { pid: $writer }
collectors:
  bio: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

iter_id=
for id in $(prog_ids "$KMOND_PID"); do
	if bpftool prog show id "$id" 2>/dev/null | grep -q ' name bio_find_lost '; then
		iter_id=$id
	fi
done
[ -n "$iter_id" ] || skip "no lost iterator (kernel without map iterators)"
runs() {
	bpftool prog show id "$iter_id" -j |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("run_cnt", 0))'
}

sleep 0.5
before=$(runs)
sleep 2 # 10 intervals
idle=$(runs)
expect_eq "walks while no followed I/O ran" $((idle - before)) 0

touch "$WORK/go"
for ((i = 0; i < 100; i++)); do
	[ -e "$WORK/done" ] && break
	sleep 0.1
done
[ -e "$WORK/done" ] || fail "the writer's dd did not end"
sleep 0.6 # 3 intervals
busy=$(runs)
[ "$busy" -gt "$idle" ] || fail "no walk after the writer's I/O ($busy runs, $idle before)"
echo "ok: iterator runs after the writer's I/O: $((busy - idle))"

sleep 0.6 # a walk that finds the map empty
after=$(runs)
sleep 2
last=$(runs)
expect_eq "walks once the writer's I/O was over" $((last - after)) 0

stop_kmond
# The walks were the writer's: its dd's I/O was followed.
written=$($RECORDS "$WORK/out.json" --kind bio --where service=writer --where op=write --sum bytes)
$BIO_SHORT "$WORK/out.json" $((8 * 1024 * 1024)) "$written" "the writer's dd" || fail "the writer's bytes"
