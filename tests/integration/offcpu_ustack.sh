#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# User frames are symbolized from the process's own ELF symbols: the
# helper blocks in its function kmt_offcpu_block (a PIE: its load bias
# must be undone), which must appear as the innermost user frame. A thread
# blocking from two places in turn gets each block's own user stack (the
# kernel reuses a thread's last user stack only for the same place).
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_offcpu" "$WORK/kmt_named"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: named
    match: { comm: kmt_named }
collectors:
  offcpu: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
"$WORK/kmt_named" 20 30 &
first=$!
wait "$first" || fail "helper failed"
"$WORK/kmt_named" 10 40 --two &
second=$!
wait "$second" || fail "helper failed"
sleep 0.8
stop_kmond

python3 - "$WORK/out.json" "$first" "$second" <<'PY' || fail "user frames"
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in recs if r["kind"] == "offcpu" and r["service"] == "named"]
if not mine:
    sys.exit("no offcpu record for the helper")
first, second = int(sys.argv[2]), int(sys.argv[3])
# each run's blocks by its pid, each at least its sleep (no upper bound:
# a starved machine, a qemu guest beside CI's suites, wakes it late)
def blocks_in(fn, pid, sleep_ns):
    rs = [r for r in mine if r["pid"] == pid
          and any(f.startswith(fn + "+0x") for f in r["stack"])
          and sleep_ns <= r["total_ns"] / r["count"]]
    return rs, sum(r["count"] for r in rs)
hits, blocks = blocks_in("kmt_offcpu_block", first, 20e6)
if not 28 <= blocks <= 30:
    sys.exit(f"{blocks} 20 ms blocks with a kmt_offcpu_block frame, want 30: "
             f"{[r['stack'] for r in mine]}")
_, one = blocks_in("kmt_offcpu_block", second, 10e6)
_, other = blocks_in("kmt_offcpu_block_other", second, 10e6)
# a block whose user stack was not walked (a sweep under way, a stack
# map full) is counted in stacks_lost: the only shortfall allowed past 2
stats = [r for r in recs if r["kind"] == "stats"]
offcpu = stats[-1]["collectors"]["offcpu"] if stats else {}
least = min(18, 20 - offcpu.get("stacks_lost", 0))
if not (least <= one <= 20 and least <= other <= 20):
    for r in mine:
        if r["pid"] == second:
            print(r["count"], r["total_ns"] // r["count"], r["stack"][:8])
    sys.exit(f"alternating: {one} blocks in kmt_offcpu_block and {other} in "
             f"kmt_offcpu_block_other, want 20 each (offcpu stats: "
             f"{offcpu})")
if one < 18 or other < 18:
    print(f"of the alternating blocks, {40 - one - other} without their user "
          f"stack, {offcpu['stacks_lost']} counted so")
print(f"ok: alternating places: {one} and {other} blocks")
st = hits[0]["stack"]
i = next(i for i, f in enumerate(st) if f.startswith("kmt_offcpu_block"))
if not st[i - 1].startswith(os.environ["SYSCALL_ENTRY_FRAME"]):
    sys.exit(f"kmt_offcpu_block is not the innermost user frame: {st}")
print(f"ok: {blocks} blocks in kmt_offcpu_block: {st[i:]}")
PY
