#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact bytes of selected writers (another's I/O could merge)
# With services configured, only their I/O counts, and each I/O counts for
# the process that submitted it: a selected process runs dd after dd
# beside writers that no selector names, and every selected dd is counted
# with exactly its own bytes under its service; the other writers are not
# counted at all. blk-mq issues queued requests from whichever task runs
# the queue, so the writers' requests are often issued in a selected dd's
# context (and the other way round): they must not become its I/O.
source "$(dirname "$0")/../lib/kmond.sh"

MIB=$((1024 * 1024))
ROUNDS=8
WRITERS=5
# One file allocated before (one extent: a file of this size is placed
# whole), each writer in a region of its own, written in place
# (conv=notrunc), with 1 MiB never written between regions: no two
# writers' blocks are adjacent on the disk, so the block layer never
# merges one writer's I/O into another's request. (With a file each and a
# small spacer after it, a selected dd once counted 33 of its 32 MiB:
# ext4 puts small files apart from large ones, so the spacers guarded
# nothing, and one writer's file began where another's ended.)
REGION=33 # MiB
fallocate -l $(((WRITERS + 1) * REGION))M "$WORK/disk" || fail "fallocate in $WORK"
extents=$(filefrag "$WORK/disk" 2>/dev/null)
echo "the writers' file: $extents"
# The selected process (a pid selector: it and what it starts) waits for
# the go file, then runs the rounds' dds one after the other.
bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	for ((i = 0; i < $2; i++)); do
		dd if=/dev/zero of="$1/disk" bs=1M count=32 oflag=direct \
			conv=notrunc 2>/dev/null &
		echo $! >>"$1/mine.pids"
		wait $! || exit 1
	done' _ "$WORK" $ROUNDS &
mine=$!
STARTED_PIDS+=($mine)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: writer
    match: { pid: $mine }
collectors:
  bio: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
# The writers no selector names: dd after dd, until the selected ones end.
for ((w = 1; w <= WRITERS; w++)); do
	bash -c 'while [ ! -e "$1/stop" ]; do
		dd if=/dev/zero of="$1/disk" bs=1M seek=$2 count=16 oflag=direct \
			conv=notrunc 2>/dev/null || exit 1
	done' _ "$WORK" $((w * REGION)) &
	STARTED_PIDS+=($!)
done
touch "$WORK/go"
wait $mine || fail "a selected dd failed"
touch "$WORK/stop"
for pid in "${STARTED_PIDS[@]:1}"; do
	wait "$pid" || fail "an unselected dd failed"
done
sleep 0.8
stop_kmond

# Each selected dd: its 32 MiB exactly, under its service, with its comm.
# One short of that must be counted in bio's lost (a completion the kernel
# ran no program for, see bio_dd.sh); one over it is another's I/O.
PYTHONPATH=$(dirname "$0")/../lib python3 - "$WORK/out.json" $((32 * MIB)) $mine $(cat "$WORK/mine.pids") <<'PY' ||
import json, sys
from bio_short import lost_ios, short_mib
path, want, shell = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pids = [int(p) for p in sys.argv[4:]]
recs = [json.loads(l) for l in open(path)]
bio = [r for r in recs if r.get("kind") == "bio"]
lost = lost_ios(recs)
ok = True
def expect(what, cond):
    global ok
    print(("ok: " if cond else "FAIL: ") + what)
    ok &= cond
expect(f"{len(pids)} selected dds", len(pids) > 0)
short = 0
for pid in pids:
    mine = [r for r in bio if r["pid"] == pid and r["op"] == "write"]
    got = sum(r["bytes"] for r in mine)
    short += short_mib(got, want)
    expect(f"bytes written by selected dd {pid}: {got} <= {want}", got <= want)
    expect(f"dd {pid}: service writer, comm dd",
           {(r["service"], r["comm"]) for r in mine} == {("writer", "dd")})
expect(f"{short} MiB short, {lost} I/Os lost", short <= lost)
others = [r for r in bio if r["pid"] not in pids + [shell]]
expect(f"records of processes no service selects: {len(others)}", not others)
sys.exit(0 if ok else 1)
PY
	fail "selected dds' records"
