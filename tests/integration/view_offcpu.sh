#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# End to end: kmond's offcpu collector watches a process that sleeps in
# nanosleep; kmon-view renders its records as a flame graph in which the
# nanosleep frames appear, and as a heatmap whose busiest cell is the
# sleep's duration row. Needs the offcpu collector: without it this test
# FAILS (it never passes vacuously).
source "$(dirname "$0")/../lib/kmond.sh"

VIEW=$BUILD/kmon-view
"$KMOND" --probe >"$WORK/probe" || fail "kmond --probe failed"
grep -Eq '^offcpu ' "$WORK/probe" ||
	fail "kmond has no offcpu collector ('kmond --probe' prints no offcpu line): this test needs the offcpu collector merged"

# 10 ms sleeps for 5 s: kmond runs 3 s in the middle of it.
"$BUILD/tests/kmt_nanosleep" 10 500 &
sleeper=$!
STARTED_PIDS+=("$sleeper")
cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - name: sleeper
    match: { pid: $sleeper }
collectors:
  offcpu: { enabled: true }
exporters:
  - { type: file, path: "-" }
YAML
"$KMOND" -c "$WORK/kmond.yaml" --duration 3 >"$WORK/out.json" 2>"$WORK/kmond.err" ||
	fail "kmond exited with $?"
n=$($RECORDS "$WORK/out.json" --kind offcpu --where service=sleeper --count)
[ "$n" -ge 1 ] || fail "no offcpu record for the sleeper"
echo "ok: $n offcpu records for the sleeper"

"$VIEW" flame -i "$WORK/out.json" --service sleeper --folded >"$WORK/folded" ||
	fail "kmon-view flame --folded"
grep -q 'nanosleep' "$WORK/folded" ||
	fail "no nanosleep frame in the folded stacks: $(head -3 "$WORK/folded")"
grep -q '^kmt_nanosleep;' "$WORK/folded" || fail "no kmt_nanosleep root frame"
echo "ok: folded stacks hold nanosleep frames"

"$VIEW" flame -i "$WORK/out.json" --service sleeper -o "$WORK/flame.svg" ||
	fail "kmon-view flame"
python3 - "$WORK/flame.svg" <<'PY' || fail "flame SVG"
import sys
import xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
frames = [g for g in ET.parse(sys.argv[1]).getroot().iter(S + "g")
          if g.get("class") == "f"]
sleeps = [g for g in frames if "nanosleep" in g.get("data-n")]
if not sleeps:
    sys.exit("no nanosleep frame in the SVG")
total = max(int(g.get("data-ns")) for g in frames)
ns = max(int(g.get("data-ns")) for g in sleeps)
# the sleeper spends nearly all its time in nanosleep
if ns < 0.5 * total:
    sys.exit(f"nanosleep frames hold {ns} of {total} ns")
print(f"ok: {len(sleeps)} nanosleep frames in the SVG, "
      f"{100 * ns / total:.0f}% of the off-CPU time")
PY

"$VIEW" heatmap -i "$WORK/out.json" --service sleeper -o "$WORK/heat.svg" ||
	fail "kmon-view heatmap"
python3 - "$WORK/heat.svg" <<'PY' || fail "heatmap SVG"
import sys
import xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
rows = {}
for r in ET.parse(sys.argv[1]).getroot().iter(S + "rect"):
    if r.get("class") == "cell":
        lo = int(r.get("data-lo"))
        rows[lo] = rows.get(lo, 0) + int(r.get("data-count"))
busiest = max(rows, key=rows.get)
# 10 ms sleeps fall in the [2^23, 2^24) ns row: 8.4 ms .. 16.8 ms
if busiest != 2**23:
    sys.exit(f"busiest latency row starts at {busiest} ns: {rows}")
print(f"ok: the heatmap's busiest row is 8.4-16.8 ms ({rows[busiest]} blocks)")
PY
