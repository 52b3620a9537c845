#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# offcpu keeps a user stack whose slot in its stack map another holds: a
# process blocks in 600 distinct user stacks (kmt_stacks: chains of ten
# calls, each from one of two call sites), of which about 22 share a
# slot of the map's 8192 with another (600^2 / 2 / 8192). Without the
# spare map 23 to 27 stacks were lost here (the collisions, and blocks
# begun during the sweeps each loss starts); with it 0 to 7, so at most
# 12 (three stacks that meet in the first map meet in the spare too),
# not counting the blocks begun while a sweep was under way
# (stacks_swept: as many as a sweep's length allows, 14 of 17 lost in
# one run in a TCG guest).
# Every block counted has its whole chain or counts in stacks_lost, and
# no block is lost.
source "$(dirname "$0")/../lib/kmond.sh"

N=600
cp "$BUILD/tests/kmt_stacks" "$WORK/kmt_stacks"
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: stacks
    match: { comm: kmt_stacks }
collectors:
  offcpu: { enabled: true, state: sleep, min_block: 1ms }
YAML
start_kmond "$WORK/kmond.yaml"
"$WORK/kmt_stacks" $N &
pid=$!
STARTED_PIDS+=("$pid")
wait "$pid" || fail "kmt_stacks exited with $?"
sleep 1.2
stop_kmond

python3 - "$WORK/out.json" "$pid" "$N" <<'PY' || fail "offcpu's user stacks"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
pid, n = int(sys.argv[2]), int(sys.argv[3])
ENTRIES = ("entry_SYSCALL_64", "asm_exc_page_fault")


def user_frames(stack):
    """The frames after the last way into the kernel: the user stack."""
    last = max((i for i, f in enumerate(stack) if f.startswith(ENTRIES)),
               default=len(stack) - 1)
    return stack[last + 1:]


chains = set()
whole_blocks = 0  # blocks whose record holds a whole chain
other_blocks = 0  # the process's own: its start-up, its first pause
partial = []      # records of chains cut short
for r in recs:
    if r["kind"] == "offcpu" and r["pid"] == pid:
        # the return addresses in the chain: down+OFFSET, via_...+OFFSET
        chain = tuple(f for f in r["stack"] if f.startswith(("down+", "via_")))
        chains.add(chain)
        if len(chain) == 2 * 10 + 1:
            whole_blocks += r["count"]
        elif not chain and 0 < len(user_frames(r["stack"])) < 10:
            # ld.so opening libraries (from 9p, in a guest), the pause;
            # not a chain whose frames were not symbolized (23 and more)
            other_blocks += r["count"]
        elif any(f.startswith("asm_exc_page_fault") for f in r["stack"]):
            other_blocks += r["count"]  # a page of the chain's code read
        else:
            partial.append(r)
whole = {c for c in chains if len(c) == 2 * 10 + 1}
offcpu = [r for r in recs if r["kind"] == "stats"][-1]["collectors"]["offcpu"]
lost, stacks, blocks = offcpu["lost"], offcpu["stacks_lost"], offcpu["events"]
swept = offcpu["stacks_swept"]
print(f"ok: {len(whole)} whole chains of {n}; {blocks} blocks counted, "
      f"{other_blocks} not in a chain, lost {lost}, of them stacks {stacks} "
      f"({swept} during sweeps)")
for r in partial[:4]:
    print(f"  {r['count']} blocks of a chain cut short: {r['stack']}")
if lost != stacks:
    sys.exit(f"blocks lost: {lost - stacks}")
if stacks - swept > 12:
    sys.exit(f"{stacks - swept} user stacks lost to the maps, want at most 12")
# every block of a chain has its whole chain, symbolized though the
# process exited before the last were read, or counts in stacks_lost (a
# chain's block preempted until its timer fired is rightly none: its
# time ran off)
if whole_blocks + stacks < blocks - other_blocks:
    sys.exit(f"{blocks - other_blocks - whole_blocks} blocks of chains "
             f"without their chain, {stacks} stacks lost")
PY
