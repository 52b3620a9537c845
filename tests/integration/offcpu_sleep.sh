#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A process sleeping 40 x 50 ms shows ~2 s off-CPU in stacks through the
# kernel's nanosleep, with its libc caller symbolized from the ELF, 40
# blocks, and a histogram whose blocks all fall in the 50 ms row. Time is
# bounded by the sleeps as the sleeper measured them, so that a starved
# machine (a qemu guest beside CI's suites) lengthens bounds and truth
# alike.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_offsleep"
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: sleeper
    match: { comm: kmt_offsleep }
collectors:
  offcpu: { enabled: true, state: sleep, min_block: 1ms }
YAML
start_kmond "$WORK/kmond.yaml"
if [ -n "${EXPECT_ATTACH:-}" ]; then # run by offcpu_fallback.sh
	grep -q "collector offcpu: running ($EXPECT_ATTACH)" "$WORK/kmond.err" ||
		fail "offcpu does not run on $EXPECT_ATTACH: $(grep offcpu "$WORK/kmond.err")"
fi
"$WORK/kmt_offsleep" 50 40 "$WORK/slept" &
sleeper=$!
STARTED_PIDS+=("$sleeper")
wait "$sleeper" || fail "the sleeper failed"
sleep 1.2
stop_kmond

python3 - "$WORK/out.json" "$sleeper" "$WORK/slept" <<'PY' || fail "offcpu records"
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
entry = os.environ["SYSCALL_ENTRY_FRAME"]
pid = int(sys.argv[2])
# each sleep as the sleeper saw it: longer than 50 ms where its CPU
# (a starved qemu guest's vCPU) ran it late after the wake-up
slept = [int(l) for l in open(sys.argv[3])]
mine = [r for r in recs if r["kind"] == "offcpu" and r["pid"] == pid]
if not mine:
    sys.exit("no offcpu record for the sleeper")
bad = [r for r in mine if r["service"] != "sleeper" or r["comm"] != "kmt_offsleep"]
if bad:
    sys.exit(f"wrong process fields: {bad[0]}")
kernel = ("do_nanosleep", "hrtimer_nanosleep")
sleeps = [r for r in mine if any(f.startswith(kernel) for f in r["stack"])]
ns = sum(r["total_ns"] for r in sleeps)
count = sum(r["count"] for r in sleeps)
print(f"ok: {count} blocks, {ns / 1e9:.3f} s in nanosleep stacks")
# 40 x 50 ms asleep (less the microseconds before each switch-out), at
# most what the sleeper measured around its calls (a loaded machine adds
# run-queue waits after each wake-up, which count off-CPU).
if not 1.95e9 <= ns <= sum(slept):
    sys.exit(f"nanosleep off-CPU time {ns} ns, want 2e9 to {sum(slept)} "
             "(the sleeps as the sleeper measured them)")
if not 38 <= count <= 42:
    sys.exit(f"nanosleep blocks {count}, want ~40")
# kernel frames first, innermost first (the scheduler's own frames are
# left out of stacks taken at switch-in)
st = sleeps[0]["stack"]
first = lambda p: next((i for i, f in enumerate(st) if f.startswith(p)), -1)
if not 0 <= first("hrtimer_nanosleep") < first(entry):
    sys.exit(f"kernel frames out of order: {st}")
# then the user frames: libc's nanosleep wrapper, from its .dynsym
user = st[first(entry) + 1:]
if not user or "nanosleep+0x" not in user[0]:
    sys.exit(f"innermost user frame is not libc's nanosleep: {user}")
print(f"ok: user frames {user}")
hists = [r for r in recs if r["kind"] == "offcpu_hist" and r["pid"] == pid]
rows = {}
for r in hists:
    for lo, n in r["buckets"]:
        rows[lo] = rows.get(lo, 0) + n
# 50 ms falls in [2^25, 2^26) ns. A block is at least 50 ms less the
# microseconds before its switch-out and at most its sleep as measured:
# a sleep measured 2^26 ns or more (a wake-up 17 ms late, on a starved
# machine) may put its block a row up, never down, and never above the
# row of the longest sleep. (The rows hold the process's other blocks
# too: its exec's page-ins, a few ms in a loaded guest.)
row = lambda n: 1 << (n.bit_length() - 1)
short = sum(1 for n in slept if n < 2**26)
top = row(max(slept))
sleeps = sum(n for lo, n in rows.items() if 2**25 <= lo <= top)
if rows.get(2**25, 0) < short - 2 or sleeps < 38:
    sys.exit(f"histogram rows {rows}: want ~40 blocks from [2^25, 2^26) ns "
             f"({short} sleeps measured there) to the row {top}")
print(f"ok: histogram {rows}")
stats = [r for r in recs if r["kind"] == "stats"]
lost = stats[-1]["collectors"]["offcpu"]["lost"]
# stacks_lost: of lost, the stacks (blocks counted without one)
stacks_lost = stats[-1]["collectors"]["offcpu"].get("stacks_lost")
if lost or stacks_lost != 0:
    sys.exit(f"offcpu lost {lost}, of them stacks {stacks_lost}")
PY
