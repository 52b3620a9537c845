#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# 64 MiB written, then read, with O_DIRECT by dd on the disk under $WORK:
# the bio records of each dd add up to 64 MiB of writes (then reads) on
# that disk, named by its pid and comm, with plausible latencies; the
# bio_hist records hold the same I/Os.
source "$(dirname "$0")/../lib/kmond.sh"

MIB=$((1024 * 1024))
# The whole disk holding $WORK (vda here), as the kernel names it.
disk=$(lsblk -no PKNAME "$(df --output=source "$WORK" | tail -1)" 2>/dev/null)
[ -n "$disk" ] || disk=$(basename "$(df --output=source "$WORK" | tail -1)")
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
collectors:
  bio: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
if [ -n "${EXPECT_ATTACH:-}" ]; then # run by bio_fallback.sh
	grep -q "collector bio: running ($EXPECT_ATTACH)" "$WORK/kmond.err" ||
		fail "bio does not run on $EXPECT_ATTACH: $(grep bio "$WORK/kmond.err")"
fi
dd if=/dev/zero of="$WORK/file" bs=1M count=64 oflag=direct 2>/dev/null &
writer=$!
wait $writer || fail "dd write failed"
dd if="$WORK/file" of=/dev/null bs=1M iflag=direct 2>/dev/null &
reader=$!
wait $reader || fail "dd read failed"
sleep 0.8
stop_kmond

# check PID OP: bytes of PID's OP I/Os on $disk within 2% of 64 MiB,
# comm dd, p50 <= p99, latency > 0, bio_hist counts = bio counts. An I/O
# short of that must be counted in bio's lost (tests/lib/bio_short.py):
# kmond counts such a request lost when its iterator finds it freed or the
# request is used again.
check() {
	PYTHONPATH=$(dirname "$0")/../lib python3 - "$WORK/out.json" "$1" "$2" "$disk" $((64 * MIB)) "$lost" <<'PY' || fail "$2 records of dd $1"
import json, sys
from bio_short import fits, short_mib
path, pid, op, disk, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
lost = int(sys.argv[6])
recs = [json.loads(l) for l in open(path)]
mine = [r for r in recs if r.get("pid") == pid and r.get("op") == op]
bio = [r for r in mine if r["kind"] == "bio"]
hist = [r for r in mine if r["kind"] == "bio_hist"]
ok = True
def expect(what, cond):
    global ok
    print(("ok: " if cond else "FAIL: ") + what)
    ok &= cond
nbytes = sum(r["bytes"] for r in bio if r["disk"] == disk)
expect(f"{op} bytes on {disk}: {nbytes} ~ {want}, {short_mib(nbytes, want)} MiB short, {lost} lost",
       fits(nbytes, want, lost, slack=0.02))
expect("comm dd", {r["comm"] for r in bio} == {"dd"})
expect("service null", {r["service"] for r in bio} == {None})
for r in bio:
    if r["count"]:
        expect(f"0 < p50 {r['latency_p50_ns']} <= p99 {r['latency_p99_ns']}",
               0 < r["latency_p50_ns"] <= r["latency_p99_ns"])
    if r["queued"]:
        expect(f"queue p50 {r['queue_p50_ns']} <= p99 {r['queue_p99_ns']}",
               r["queue_p50_ns"] <= r["queue_p99_ns"])
count = sum(r["count"] for r in bio)
expect(f"count {count} >= 64 - lost {lost}", count >= 64 - lost)
in_hist = sum(c for r in hist for _, c in r["buckets"])
expect(f"bio_hist I/Os {in_hist} = bio count {count}", in_hist == count)
sys.exit(0 if ok else 1)
PY
}
# Said before the checks, so that a failed one says whether I/Os were lost.
lost=$(PYTHONPATH=$(dirname "$0")/../lib python3 -c '
import json, sys, bio_short
print(bio_short.lost_ios([json.loads(l) for l in open(sys.argv[1])]))' "$WORK/out.json")
echo "bio events lost: $lost"
check $writer write
check $reader read
[ "$lost" -eq 0 ] || echo "note: $lost I/Os lost (counted), see check()"
# kmon-view draws the writer's bio_hist records: every I/O in some cell.
"$BUILD/kmon-view" heatmap --bio --pid $writer -i "$WORK/out.json" \
	-o "$WORK/heat.svg" || fail "kmon-view heatmap --bio"
cells=$(python3 -c '
import re, sys
svg = open(sys.argv[1]).read()
print(sum(int(n) for n in re.findall(r"<rect class=\"cell\"[^>]* data-count=\"(\d+)\"", svg)))' "$WORK/heat.svg")
expect_eq "I/Os in the heatmap" "$cells" "$($RECORDS "$WORK/out.json" --kind bio --where pid=$writer --sum count)"
