#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: sets kernel.bpf_stats_enabled; loop devices, fsfreeze
# The bio collector walks its in-flight map each interval, and runs its
# lost walk (a program run over the map, which finds requests freed while
# followed: completions the kernel skipped) only when the walk finds a
# followed request issued before the previous walk began: never while
# nothing is in flight, nor for I/O that completes within an interval;
# while a request is held in flight, every interval; and no more once it
# completed. The request is held by a loop device whose backing file is
# on a frozen file system: it is issued, and its loop worker waits for
# the thaw. The walk's runs show in its run_cnt, kept while
# kernel.bpf_stats_enabled is on: one a run.
source "$(dirname "$0")/../lib/kmond.sh"

INTERVAL_MS=500
STATS=/proc/sys/kernel/bpf_stats_enabled
[ -w $STATS ] || skip "no $STATS"
for tool in losetup fsfreeze mkfs.ext4; do
	command -v $tool >/dev/null || skip "no $tool"
done

outer= inner= writer=
teardown() {
	# The held write ends with the thaw; then the writer runs through
	# what it has left (its dds hold the loop devices).
	fsfreeze -u "$WORK/mnt" 2>/dev/null
	if [ -n "$writer" ]; then
		touch "$WORK/go1" "$WORK/go2" "$WORK/end"
		wait "$writer" 2>/dev/null
	fi
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	[ -n "$inner" ] && losetup -d "$inner"
	# Busy while something (udev's probe) still holds the inner device:
	# detached now, gone when that lets go.
	if mountpoint -q "$WORK/mnt"; then
		umount "$WORK/mnt" 2>/dev/null || umount -l "$WORK/mnt"
	fi
	[ -n "$outer" ] && losetup -d "$outer"
	echo "$old_stats" >$STATS
	cleanup
}
old_stats=$(cat $STATS)
trap teardown EXIT
echo 1 >$STATS

truncate -s 32M "$WORK/outer.img"
mkfs.ext4 -q -F "$WORK/outer.img" || fail "mkfs.ext4"
outer=$(losetup --find --show "$WORK/outer.img") || skip "no loop device"
mkdir "$WORK/mnt"
mount "$outer" "$WORK/mnt" || fail "mount $outer"
truncate -s 8M "$WORK/mnt/inner.img"
inner=$(losetup --find --show "$WORK/mnt/inner.img") || fail "losetup inner"
echo "inner loop device $inner on $outer"

# The one followed process: on go1 writes 1 MiB in 4 KiB writes with
# O_DIRECT to a file (I/O that completes within an interval), on go2
# 4 KiB to the inner loop device (held while the file system is frozen).
bash -c 'wait_for() { while [ ! -e "$1" ]; do sleep 0.05; done; }
	wait_for "$1/go1"
	dd if=/dev/zero of="$1/file" bs=4k count=256 oflag=direct 2>/dev/null
	touch "$1/done1"
	wait_for "$1/go2"
	dd if=/dev/zero of="$2" bs=4k count=1 oflag=direct 2>/dev/null
	touch "$1/done2"
	wait_for "$1/end"' _ "$WORK" "$inner" &
writer=$!
cat >"$WORK/kmond.yaml" <<YAML
interval: ${INTERVAL_MS}ms
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
[ -n "$iter_id" ] || fail "no lost walk: $(grep lost_walk "$WORK/kmond.err")"
runs() {
	bpftool prog show id "$iter_id" -j |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("run_cnt", 0))'
}
intervals() { sleep "$(awk -v n="$1" -v ms=$INTERVAL_MS 'BEGIN { print n * ms / 1000 }')"; }
wait_file() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -e "$WORK/$1" ] && return
		sleep 0.1
	done
	fail "no $1 after 10 s"
}

intervals 1
r0=$(runs)
intervals 4
r1=$(runs)
expect_eq "walk run_cnt while nothing is in flight" "+$((r1 - r0))" +0

touch "$WORK/go1"
wait_file done1
intervals 3
r2=$(runs)
expect_eq "walk run_cnt for I/O done within an interval" "+$((r2 - r1))" +0

# Held: from its second interval on, a run each interval. Three runs,
# within 10 s.
fsfreeze -f "$WORK/mnt" || fail "fsfreeze $WORK/mnt"
touch "$WORK/go2"
for ((i = 0; i < 100; i++)); do
	r3=$(runs)
	[ $((r3 - r2)) -ge 3 ] && break
	sleep 0.1
done
[ -e "$WORK/done2" ] && fail "the write to $inner was not held"
[ $((r3 - r2)) -ge 3 ] ||
	fail "walk run_cnt while a request was held 10 s: +$((r3 - r2)), want +3"
echo "ok: walk run_cnt while a request was held: +$((r3 - r2))"
fsfreeze -u "$WORK/mnt" || fail "fsfreeze -u $WORK/mnt"
wait_file done2
intervals 2 # the interval that sees it gone
r4=$(runs)
intervals 4
r5=$(runs)
expect_eq "walk run_cnt once the held request completed" "+$((r5 - r4))" +0
stop_kmond

# Both writes recorded under the writer, the held one with its latency
# (the 2 intervals it was held at least): not taken for lost.
disk=$(basename "$inner")
held=$($RECORDS "$WORK/out.json" --kind bio --where service=writer --where op=write --where disk="$disk" --sum bytes)
expect_eq "bytes written to $disk" "$held" 4096
p99=$($RECORDS "$WORK/out.json" --kind bio --where service=writer --where disk="$disk" --values latency_p99_ns | sort -n | tail -1)
[ "${p99:-0}" -ge $((2 * INTERVAL_MS * 1000000)) ] || fail "held write's p99 latency: ${p99:-none} ns"
echo "ok: held write's p99 latency $p99 ns"
all=$($RECORDS "$WORK/out.json" --kind bio --where service=writer --where op=write --sum bytes)
$BIO_SHORT "$WORK/out.json" $((1024 * 1024)) $((all - held)) "the writer's file" || fail "the writer's file"
