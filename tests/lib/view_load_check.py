#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""kmon-view load on inputs written here: one panel per service, every
point of the load and occupancy records read back from the SVG (data-ts,
data-v), an endpoint's records of the client side under its name, a gap
where a fit did not hold, window records left out, the
filters, and bad input refused with exit code 2. Request outcomes: the
fraction of each interval's requests that failed, a gap where none was
known, the panel's error count in its legend; no such series for a
service whose records have none (a kmond before them).

view_load_check.py KMON_VIEW WORKDIR"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
T0 = 1700000000 * 10**9


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(view, args, inp):
    with open(inp + ".in", "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in inp_recs[inp]))
    return subprocess.run([view, "load", "-i", inp + ".in"] + args,
                          capture_output=True, text=True)


inp_recs = {}
# api's (outcomes, errors) per interval: none known in interval 2
OUTCOMES = [(100, 0), (100, 5), (0, 0), (40, 40), (200, 1), (10, 0)]


def main():
    view, work = sys.argv[1], sys.argv[2]
    recs = []
    want = {}
    for i in range(6):
        ts = T0 + i * 10**9
        for svc, busy, occ in (("api", 0.1 * i, 0.2 * i), ("db", 0.5, 3.5)):
            rec = {"kind": "load", "ts": ts, "node": "n", "service": svc,
                   "side": "server", "busy": busy, "occupancy": occ,
                   "arrivals": 1}
            if svc == "api":  # db's kmond is from before outcomes
                rec["outcomes"], rec["errors"] = OUTCOMES[i]
                if OUTCOMES[i][0]:
                    want.setdefault(("api", "errors"), []).append(
                        (ts, OUTCOMES[i][1] / OUTCOMES[i][0]))
            recs.append(rec)
            want.setdefault((svc, "busy"), []).append((ts, busy))
            want.setdefault((svc, "occupancy"), []).append((ts, occ))
        # the client side: an endpoint, named so
        recs.append({"kind": "load", "ts": ts, "node": "n",
                     "endpoint": "10.0.0.9:5432", "side": "client",
                     "busy": 0.3, "occupancy": 0.4, "arrivals": 1})
        want.setdefault(("10.0.0.9:5432", "busy"), []).append((ts, 0.3))
        want.setdefault(("10.0.0.9:5432", "occupancy"), []).append((ts, 0.4))
        rho = None if i == 3 else [0.9 - 0.01 * i, 0.2 + 0.01 * i]
        recs.append({"kind": "occupancy", "ts": ts, "node": "n",
                     "service": "api", "scope": "interval", "tiers": 2,
                     "rho": rho})
        if rho:
            want.setdefault(("api", "rho1"), []).append((ts, rho[0]))
            want.setdefault(("api", "rho2"), []).append((ts, rho[1]))
    # a window overlaps its intervals: not drawn
    recs.append({"kind": "occupancy", "ts": T0, "node": "n",
                 "service": "api", "scope": "window", "tiers": 2,
                 "rho": [0.5, 0.5]})
    recs.append({"kind": "tcp", "ts": T0, "node": "n"})  # other kinds: skipped
    base = os.path.join(work, "good")
    inp_recs[base] = recs
    out = os.path.join(work, "load.svg")
    r = run(view, ["-o", out], base)
    if r.returncode != 0:
        fail(f"kmon-view load: {r.returncode}: {r.stderr}")
    root = ET.parse(out).getroot()
    panels = [t.text for t in root.iter(SVG + "text")
              if t.get("class") == "panel"]
    if panels != ["api", "db", "10.0.0.9:5432"]:
        fail(f"panels {panels}")
    got = {}
    for g in root.iter(SVG + "g"):
        key = (g.get("data-service"), g.get("data-series"))
        got[key] = [(int(c.get("data-ts")), float(c.get("data-v")))
                    for c in g.iter(SVG + "circle")]
        lines = list(g.iter(SVG + "polyline"))
        if key in (("api", "rho1"), ("api", "errors")) and len(lines) != 2:
            fail(f"{key}: {len(lines)} polylines, want 2 (a gap)")
    if set(got) != set(want):
        fail(f"series {sorted(got)} != {sorted(want)}")
    for k in want:
        if len(got[k]) != len(want[k]) or any(
                a[0] != b[0] or abs(a[1] - b[1]) > 1e-6
                for a, b in zip(got[k], want[k])):
            fail(f"{k}: {got[k]} != {want[k]}")
    print(f"ok: {len(want)} series, {sum(len(v) for v in want.values())} "
          "points read back")
    legends = {t.get("data-series"): t.text for t in root.iter(SVG + "text")
               if t.get("class") == "legend"}
    errors = sum(e for _, e in OUTCOMES)
    outcomes = sum(o for o, _ in OUTCOMES)
    want_legend = (f"errors ({errors} of {outcomes}, "
                   f"{100 * errors / outcomes:.1f}%) measured")
    if legends.get("errors") != want_legend:
        fail(f"errors legend {legends.get('errors')!r}, want {want_legend!r}")
    print(f"ok: {want_legend}; none for db (no outcomes in its records)")

    r = run(view, ["-o", out, "--service", "db"], base)
    root = ET.parse(out).getroot()
    panels = [t.text for t in root.iter(SVG + "text")
              if t.get("class") == "panel"]
    if r.returncode != 0 or panels != ["db"]:
        fail(f"--service db: {r.returncode} {panels}")
    print("ok: --service")

    bad = [({"kind": "load", "ts": T0, "node": "n", "service": "a",
             "busy": 1.5, "occupancy": 1}, "busy: 1.5 is above 1"),
           ({"kind": "load", "ts": T0, "node": "n", "service": "a",
             "busy": 0.5}, "occupancy: expected a number"),
           ({"kind": "occupancy", "ts": T0, "node": "n", "service": "a",
             "scope": "interval", "tiers": 2, "rho": [0.5]},
            "rho: 1 values for 2 tiers"),
           ({"kind": "occupancy", "ts": T0, "node": "n", "service": "a",
             "scope": "interval", "tiers": 2, "rho": [1.5, 0.2]},
            "rho: expected numbers 0 to 1"),
           ({"kind": "load", "ts": T0, "node": "n", "service": "a",
             "busy": 0.5, "occupancy": 1, "outcomes": 3},
            'missing "errors"'),
           ({"kind": "load", "ts": T0, "node": "n", "service": "a",
             "busy": 0.5, "occupancy": 1, "outcomes": 3, "errors": 4},
            "errors: 4 of 3 outcomes")]
    for i, (rec, msg) in enumerate(bad):
        name = os.path.join(work, f"bad{i}")
        inp_recs[name] = [rec]
        r = run(view, ["-o", out], name)
        if r.returncode != 2 or msg not in r.stderr or ":1:" not in r.stderr:
            fail(f"bad input {rec}: exit {r.returncode}, {r.stderr!r}")
    name = os.path.join(work, "none")
    inp_recs[name] = [{"kind": "tcp", "ts": T0, "node": "n"}]
    r = run(view, ["-o", out], name)
    if r.returncode != 2 or "no load or occupancy records" not in r.stderr:
        fail(f"no records: exit {r.returncode}, {r.stderr!r}")
    print("ok: bad input refused")


main()
