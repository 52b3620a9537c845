#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The stacks of slow I/Os are swept: with a stack map of one entry
# (KMOND_TEST_BIO_STACKS=1) full of a writer's stack, a reader's stacks are
# lost at first (counted), then a sweep makes room and the later reads have
# their own stacks again; no read ever shows a write's stack. Without the
# sweep the map stays full and no read has a stack.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$(command -v dd)" "$WORK/kmt_biodd"
cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: disk
    match: { comm: kmt_biodd }
collectors:
  bio: { enabled: true, slow: 1ns }
YAML
KMOND_TEST_BIO_STACKS=1 start_kmond "$WORK/kmond.yaml" -v
"$WORK/kmt_biodd" if=/dev/zero of="$WORK/file" bs=1M count=4 oflag=direct 2>/dev/null ||
	fail "dd failed"
sleep 0.5
for i in $(seq 16); do
	"$WORK/kmt_biodd" if="$WORK/file" of=/dev/null bs=1M count=1 iflag=direct 2>/dev/null &
	echo $! >>"$WORK/readers"
	wait $! || fail "dd failed"
	sleep 0.1
done
sleep 0.5
stop_kmond

python3 - "$WORK/out.json" "$WORK/readers" <<'PY' || fail "stacks after the sweep"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
readers = [int(l) for l in open(sys.argv[2])]
slow = [r for r in recs if r["kind"] == "bio_slow" and r["comm"] == "kmt_biodd"]
reads = [r for r in slow if r["op"] == "read" and r["pid"] in readers]
# Only the readers' reads are checked: the writer's file creation makes
# real metadata reads whose stacks do pass through ext4_reserve_inode_write.
for r in reads:
    if any("write" in f and "read" not in f for f in r["stack"]):
        sys.exit(f"a reader's read with a write stack: {r['stack']}")
late = [r for r in reads if r["pid"] in readers[len(readers) // 2:]]
with_stack = [r for r in late if r["stack"]]
print(f"ok: {len(reads)} slow reads, {sum(1 for r in reads if not r['stack'])} "
      f"without a stack; of the last {len(late)}, {len(with_stack)} with one")
# A read's stack differs with where its plug was flushed (at the read's
# end or when it slept), and a map of one entry holds one of them per
# sweep: half, not all. Without the sweep no read has a stack at all.
if not late or len(with_stack) < len(late) // 2:
    sys.exit("the later reads have no stacks: the full map was never swept")
stackless = sum(1 for r in slow if not r["stack"])
lost = max(r["collectors"]["bio"]["lost"] for r in recs if r["kind"] == "stats")
print(f"ok: {stackless} slow I/Os without a stack, bio lost {lost}")
if lost < stackless:
    sys.exit(f"{stackless} stacks missing but only {lost} counted lost")
PY
grep -q "bio: stack maps swept" "$WORK/kmond.err" || fail "no sweep logged"
echo "ok: swept"
