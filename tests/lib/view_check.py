#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Structural checks of kmon-view's pictures, on inputs written here.

view_check.py KMON_VIEW WORKDIR flame|heatmap|topology|errors|sample

("sample" only writes WORKDIR/off.json and WORKDIR/topo.json, the inputs
the other checks use, for tests that feed them through Kafka.)

Each check writes JSON-lines inputs, runs kmon-view, parses what it wrote
(SVG as XML, DOT with regular expressions) and compares it with what the
input implies, computed here independently. Prints "ok: ..." per check and
exits non-zero with "FAIL: ..." on the first mismatch."""
import json
import math
import os
import random
import re
import string
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

SVG = "{http://www.w3.org/2000/svg}"
T0 = 1700000000 * 10**9  # 2023-11-14 22:13:20 UTC
PAD_X = 10


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print(f"ok: {msg}")


def expect(cond, msg):
    if not cond:
        fail(msg)


class Runner:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, records, raw_lines=()):
        p = self.path(name)
        with open(p, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            for line in raw_lines:
                f.write(line)
        return p

    def run(self, *args, stdin=None):
        return subprocess.run([self.binary, *args], input=stdin,
                              capture_output=True, timeout=60)

    def ok_run(self, *args):
        p = self.run(*args)
        if p.returncode != 0:
            fail(f"kmon-view {' '.join(args)} exited {p.returncode}: "
                 f"{p.stderr.decode(errors='replace')}")
        return p.stdout.decode()


# ---------------------------------------------------------------- flame

FUNCS = ["schedule", "do_nanosleep", "hrtimer_nanosleep", "ep_poll",
         "do_epoll_wait", "futex_wait_queue", "futex_wait", "do_futex",
         "io_schedule", "blk_mq_get_tag", "tcp_recvmsg", "inet_recvmsg",
         "sock_read_iter", "vfs_read", "ksys_read", "do_syscall_64",
         "entry_SYSCALL_64_after_hwframe", "__libc_read", "main",
         "worker_loop", "start_thread", "clone3"]
PROCS = [(101, "nginx", "frontend"), (102, "nginx", "frontend"),
         (201, "redis-server", "cache"), (301, "java", None),
         (302, "java", None)]


def frame_name(frame, keep_offsets=False):
    """The name kmon-view gives a frame (docs/consumers.md: offsets stripped unless
    --offsets; ';' -> ':'; control characters -> '?')."""
    name = frame
    if not keep_offsets:
        i = frame.rfind("+0x")
        rest = frame[i + 3:]
        if i > 0 and rest and all(c in string.hexdigits for c in rest):
            name = frame[:i]
    name = name.replace(";", ":")
    name = "".join("?" if ord(c) < 0x20 else c for c in name)
    return name or "[unknown]"


def offcpu_records(n, seed):
    rnd = random.Random(seed)
    recs = []
    for i in range(n):
        pid, comm, svc = rnd.choice(PROCS)
        depth = rnd.randint(1, 9)
        outer = rnd.sample(FUNCS[8:], min(depth, len(FUNCS) - 8))
        inner = rnd.sample(FUNCS[:8], rnd.randint(1, 3))
        stack = [f"{f}+0x{rnd.randint(1, 0x3ff):x}" for f in inner + outer]
        count = rnd.randint(1, 50)
        recs.append({"kind": "offcpu", "ts": T0 + i * 500_000_000 + pid,
                     "node": "vm", "pid": pid, "comm": comm,
                     "service": svc, "stack": stack,
                     "total_ns": count * rnd.randint(10_000, 80_000_000),
                     "count": count})
    return recs


def awkward_records():
    """Frames that need escaping or renaming, an empty stack, a record
    with no off-CPU time."""
    base = {"kind": "offcpu", "ts": T0 + 7, "node": "vm", "pid": 900,
            "comm": "odd<&>\"'", "service": "svc"}
    return [
        dict(base, stack=["a;b+0x1f", "x<y>&\"'z+0x2", "\u00fcn\u00efc\u00f8d\u00e9+0x3",
                          "[unknown]", "libc.so.6+0x1234", "plus+0xzz",
                          "tab\there"],
             total_ns=123_456_789, count=3),
        dict(base, stack=[], total_ns=5_000_000, count=1),
        dict(base, stack=["schedule+0x1"], total_ns=0, count=0),
    ]


def expected_folded(recs, root="comm", offsets=False, pred=None):
    folded = defaultdict(int)
    for r in recs:
        if r["kind"] != "offcpu" or (pred and not pred(r)):
            continue
        if r["total_ns"] == 0:
            continue
        frames = []
        if root == "comm":
            frames.append(frame_name(r["comm"], True))
        elif root == "pid":
            frames.append(frame_name(f"{r['comm']} [{r['pid']}]", True))
        elif root == "service":
            frames.append(frame_name(r["service"] or "[no service]", True))
        if not r["stack"]:
            frames.append("[no stack]")
        frames += [frame_name(f, offsets) for f in reversed(r["stack"])]
        folded[tuple(frames)] += r["total_ns"]
    return dict(folded)


def parse_folded(text):
    out = {}
    lines = text.splitlines()
    for line in lines:
        stack, _, value = line.rpartition(" ")
        key = tuple(stack.split(";"))
        expect(key not in out, f"folded: stack repeated: {line}")
        out[key] = int(value)
    return out, lines


def check_folded(r, inp, recs, args=(), root="comm", offsets=False,
                 pred=None, what=""):
    got, lines = parse_folded(r.ok_run("flame", "-i", inp, "--folded",
                                       *args))
    want = expected_folded(recs, root, offsets, pred)
    for k in set(got) | set(want):
        expect(got.get(k) == want.get(k),
               f"folded{what}: {';'.join(k)}: got {got.get(k)}, "
               f"want {want.get(k)}")
    # sorted frame by frame, so shared prefixes are adjacent
    keys = [tuple(l.rpartition(" ")[0].split(";")) for l in lines]
    expect(keys == sorted(keys), f"folded{what}: lines not sorted")
    ok(f"folded{what}: {len(got)} stacks match the input")
    return want


def svg_frames(path):
    root = ET.parse(path).getroot()
    expect(root.tag == SVG + "svg", f"{path}: root is {root.tag}")
    frames = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "f":
            continue
        rect, title, text = (g.find(SVG + t) for t in ("rect", "title",
                                                        "text"))
        expect(rect is not None and title is not None and text is not None,
               "frame without rect, title or text")
        frames.append({"name": g.get("data-n"), "ns": int(g.get("data-ns")),
                       "d": int(g.get("data-d")),
                       "x": float(rect.get("x")),
                       "w": float(rect.get("width")),
                       "y": float(rect.get("y")), "title": title.text,
                       "text": text.text or ""})
    return root, frames


def check_flame_svg(path, folded, width=1200):
    root, frames = svg_frames(path)
    full = width - 2 * PAD_X
    total = sum(folded.values())
    want = defaultdict(int)
    for stack, v in folded.items():
        want[("all",)] += v
        for i in range(1, len(stack) + 1):
            want[("all",) + stack[:i]] += v
    want = {p: v for p, v in want.items() if v / total * full >= 0.1}

    # rebuild each frame's path from geometry alone: its parent is the
    # frame one level down whose span holds it
    eps = 0.011
    by_depth = defaultdict(list)
    for f in frames:
        by_depth[f["d"]].append(f)
    ys = {}
    got = {}
    for d in sorted(by_depth):
        for f in by_depth[d]:
            ys.setdefault(d, f["y"])
            expect(abs(ys[d] - f["y"]) < 1e-6, f"depth {d}: two y values")
            if d == 0:
                f["path"] = (f["name"],)
            else:
                parents = [p for p in by_depth[d - 1]
                           if p["x"] - eps <= f["x"] and
                           f["x"] + f["w"] <= p["x"] + p["w"] + eps]
                expect(len(parents) == 1,
                       f"frame {f['name']} at depth {d}: "
                       f"{len(parents)} parents")
                f["path"] = parents[0]["path"] + (f["name"],)
            expect(f["path"] not in got, f"frame twice: {f['path']}")
            got[f["path"]] = f
    for d in ys:
        if d:
            # root at the bottom: each level sits one row above the last
            expect(abs(ys[d - 1] - ys[d] - 16) < 1e-6,
                   f"depth {d} is not one row above depth {d - 1}")
    missing = set(want) - set(got)
    extra = set(got) - set(want)
    expect(not missing, f"frames missing from the SVG: {sorted(missing)[:3]}")
    expect(not extra, f"frames not in the input: {sorted(extra)[:3]}")
    for p, f in got.items():
        expect(f["ns"] == want[p],
               f"{';'.join(p)}: data-ns {f['ns']}, want {want[p]}")
        w = want[p] / total * full
        expect(abs(f["w"] - w) <= 0.006,
               f"{';'.join(p)}: width {f['w']}, want {w:.3f}")
        share = f"{100 * want[p] / total:.2f}%"
        expect(f["title"].startswith(f["name"] + " (") and
               share in f["title"] and "off-CPU" in f["title"],
               f"title {f['title']!r} lacks the name or {share}")
        t = f["text"]
        expect(t == "" or t == f["name"] or
               (t.endswith("..") and f["name"].startswith(t[:-2])),
               f"label {t!r} of {f['name']!r}")
    # siblings side by side, never overlapping
    kids = defaultdict(list)
    for p, f in got.items():
        kids[p[:-1]].append(f)
    for sib in kids.values():
        sib.sort(key=lambda f: f["x"])
        for a, b in zip(sib, sib[1:]):
            expect(b["x"] >= a["x"] + a["w"] - eps,
                   f"{a['name']} and {b['name']} overlap")
    allf = got[("all",)]
    expect(abs(allf["w"] - full) < 0.006 and abs(allf["x"] - PAD_X) < 0.006,
           "the all frame does not span the width")
    # self-contained: an inline script, nothing fetched
    text = open(path, encoding="utf-8").read()
    expect(root.find(SVG + "script") is not None, "no inline script")
    for bad in ("href", "url(", "@import", "http://", "https://"):
        for line in text.splitlines():
            if bad in line and "xmlns=" not in line:
                fail(f"external reference {bad!r}: {line[:80]}")
    return got


def flame_check(r):
    recs = offcpu_records(300, 7) + awkward_records()
    other = {"kind": "syscall", "ts": T0, "node": "vm", "pid": 1,
             "comm": "x", "service": None, "syscall": "read", "count": 1}
    inp = r.write("off.json", recs + [other], ["\n", "   \n"])

    folded = check_folded(r, inp, recs)
    check_folded(r, inp, recs, ("--offsets",), offsets=True,
                 what=" --offsets")
    for root in ("pid", "service", "none"):
        check_folded(r, inp, recs, ("--root", root), root=root,
                     what=f" --root {root}")
    # --without: a stack holding the function anywhere is left out,
    # whatever its offset; other stacks are as they were
    gone = FUNCS[8]
    holds = lambda rec: any(f.split("+")[0] == gone for f in rec["stack"])
    expect(any(holds(rec) for rec in recs) and not all(holds(rec) for rec in recs),
           f"the records hold {gone} in some stacks, not in all")
    check_folded(r, inp, recs, ("--without", gone, "--without", "no_such_function"),
                 pred=lambda rec: not holds(rec), what=f" --without {gone}")
    expect(r.run("flame", "-i", inp, "--without", "f+0x1").returncode == 2,
           "--without with an offset is refused")

    svg = r.path("flame.svg")
    r.ok_run("flame", "-i", inp, "-o", svg)
    got = check_flame_svg(svg, folded)
    ok(f"flame SVG: {len(got)} frames, widths proportional to total_ns, "
       f"root at the bottom, titles with time and share")
    # stdin and stdout give the same picture
    with open(inp, "rb") as f:
        p = r.run("flame", "-i", "-", stdin=f.read())
    expect(p.returncode == 0 and p.stdout == open(svg, "rb").read(),
           "stdin input differs from file input")
    r.ok_run("flame", "-i", inp, "-o", svg, "--width", "600")
    check_flame_svg(svg, folded, width=600)
    ok("flame SVG --width 600")
    ok("flame from stdin")

    # filters
    check_folded(r, inp, recs, ("--service", "frontend"),
                 pred=lambda x: x["service"] == "frontend",
                 what=" --service frontend")
    check_folded(r, inp, recs, ("--pid", "201"),
                 pred=lambda x: x["pid"] == 201, what=" --pid 201")
    lo, hi = T0 + 30 * 10**9, T0 + 80 * 10**9
    check_folded(r, inp, recs, ("--from", "1700000030", "--to",
                                "1700000080"),
                 pred=lambda x: lo <= x["ts"] < hi,
                 what=" --from/--to seconds")
    check_folded(r, inp, recs, ("--from", str(lo + 1), "--to", "1700000080.5"),
                 pred=lambda x: lo + 1 <= x["ts"] < hi + 5 * 10**8,
                 what=" --from ns --to fractional seconds")
    check_folded(r, inp, recs, ("--service", "frontend", "--pid", "102"),
                 pred=lambda x: x["pid"] == 102, what=" --service --pid")
    p = r.run("flame", "-i", inp, "--service", "nosuch")
    expect(p.returncode == 2 and
           p.stderr.decode() == f"{inp}: no offcpu records match the "
           "filters\n", f"empty filter result: {p.stderr!r}")
    ok("a filter that keeps nothing is an error, not an empty picture")


# -------------------------------------------------------------- heatmap

def lat_row(lat):
    r = 0
    while lat > 1:
        lat >>= 1
        r += 1
    return r


def row_lo(row):
    return 0 if row == 0 else 2**row


def expected_cells(samples, step):
    cells = defaultdict(int)
    for ts, lat, weight in samples:
        if weight:
            cells[(ts // step * step, row_lo(lat_row(lat)))] += weight
    return dict(cells)


def svg_cells(path):
    root = ET.parse(path).getroot()
    cells = {}
    geo = {}
    for rect in root.iter(SVG + "rect"):
        if rect.get("class") != "cell":
            continue
        key = (int(rect.get("data-t")), int(rect.get("data-lo")))
        expect(key not in cells, f"cell twice: {key}")
        cells[key] = int(rect.get("data-count"))
        geo[key] = (float(rect.get("x")), float(rect.get("y")),
                    rect.get("fill"), rect.find(SVG + "title").text)
    return root, cells, geo


def check_heatmap_svg(path, want, unit):
    root, got, geo = svg_cells(path)
    for k in set(got) | set(want):
        expect(got.get(k) == want.get(k),
               f"cell {k}: got {got.get(k)}, want {want.get(k)}")
    # one column per time step, one row per latency bucket: x follows
    # time, y falls as latency rises (log scale, bottom = shortest)
    xs = {}
    ys = {}
    for (t, lo), (x, y, _, title) in geo.items():
        expect(xs.setdefault(t, x) == x, f"column {t}: two x")
        expect(ys.setdefault(lo, y) == y, f"row {lo}: two y")
        expect(title.endswith(f": {got[(t, lo)]} {unit}"),
               f"cell title {title!r}")
    ts = sorted(xs)
    expect([xs[t] for t in ts] == sorted(xs.values()), "x not in time order")
    los = sorted(ys)
    expect([ys[lo] for lo in los] == sorted(ys.values(), reverse=True),
           "y not in latency order")
    # the busiest cell is the darkest colour, the legend reaches it
    top = max(got, key=got.get)
    expect(geo[top][2] == "rgb(189,0,38)", f"busiest cell is {geo[top][2]}")
    swatches = [int(s.get("data-count")) for s in root.iter(SVG + "rect")
                if s.get("class") == "swatch"]
    expect(swatches and max(swatches) == got[top] and
           swatches == sorted(set(swatches)), f"legend {swatches}")
    ids = {t.get("id") for t in root.iter(SVG + "text")}
    expect({"title", "xaxis", "yaxis", "legend"} <= ids,
           f"missing axis titles or legend: {ids}")
    labels = [t for t in root.iter(SVG + "text")
              if t.get("class") in ("xlabel", "ylabel")]
    expect(len(labels) >= 4, "axes have no tick labels")
    return got


def heatmap_check(r):
    rnd = random.Random(3)
    recs = []
    for i in range(400):
        count = rnd.randint(0, 40)
        lat = int(2 ** rnd.uniform(0, 30))
        recs.append({"kind": "offcpu", "ts": T0 + rnd.randint(0, 95 * 10**9),
                     "node": "vm", "pid": 100 + i % 3, "comm": "w",
                     "service": "s%d" % (i % 2), "stack": ["schedule+0x1"],
                     "total_ns": lat * count + (rnd.randint(0, count - 1)
                                                if count else 0),
                     "count": count})
    inp = r.write("heat.json", recs)
    step = 10 * 10**9
    svg = r.path("heat.svg")
    r.ok_run("heatmap", "-i", inp, "--step", "10s", "-o", svg)
    samples = [(x["ts"], x["total_ns"] // x["count"], x["count"])
               for x in recs if x["count"]]
    got = check_heatmap_svg(svg, expected_cells(samples, step), "blocks")
    ok(f"offcpu heatmap: {len(got)} cells match the records "
       "(total_ns/count, weighted by count)")

    r.ok_run("heatmap", "-i", inp, "--step", "10s", "-o", svg, "--pid",
             "101", "--from", "1700000020")
    sel = [(x["ts"], x["total_ns"] // x["count"], x["count"]) for x in recs
           if x["count"] and x["pid"] == 101 and x["ts"] >= T0 + 20 * 10**9]
    check_heatmap_svg(svg, expected_cells(sel, step), "blocks")
    ok("offcpu heatmap with --pid and --from")

    # histogram records win over plain records of the same source
    hist = []
    for i in range(30):
        buckets = [[lo, rnd.randint(0, 9)] for lo in
                   sorted(rnd.sample([0, 1, 15, 16, 17, 1000, 1024, 4095,
                                      65536, 10**6, 2**40], 5))]
        hist.append({"kind": "offcpu_hist", "ts": T0 + i * 3 * 10**9,
                     "node": "vm", "interval_ns": 10**9, "buckets": buckets})
    inp2 = r.write("hist.json", recs[:50] + hist)
    r.ok_run("heatmap", "-i", inp2, "--step", "5s", "-o", svg)
    samples = [(h["ts"], lo, c) for h in hist for lo, c in h["buckets"]]
    got = check_heatmap_svg(svg, expected_cells(samples, 5 * 10**9),
                            "blocks")
    ok(f"offcpu_hist heatmap: {len(got)} cells from the buckets; plain "
       "records ignored beside histograms")

    bio = [{"kind": "bio_hist", "ts": T0 + i * 10**9, "node": "vm",
            "disk": "vda", "op": "write",
            "buckets": [[2**k, i + k] for k in range(10, 20, 3)]}
           for i in range(12)]
    bio_plain = [{"kind": "bio", "ts": T0 + i * 10**9, "node": "vm",
                  "disk": "vda", "op": "read", "count": 5, "bytes": 4096,
                  "latency_p50_ns": 300_000 + i, "latency_p99_ns": 10**6}
                 for i in range(12)]
    inp3 = r.write("bio.json", bio_plain + bio)
    r.ok_run("heatmap", "--bio", "-i", inp3, "--step", "2s", "-o", svg)
    samples = [(h["ts"], lo, c) for h in bio for lo, c in h["buckets"]]
    check_heatmap_svg(svg, expected_cells(samples, 2 * 10**9), "I/Os")
    inp4 = r.write("bio_plain.json", bio_plain)
    r.ok_run("heatmap", "--bio", "-i", inp4, "--step", "2s", "-o", svg)
    samples = [(b["ts"], b["latency_p50_ns"], b["count"]) for b in bio_plain]
    check_heatmap_svg(svg, expected_cells(samples, 2 * 10**9), "I/Os")
    ok("bio heatmaps from bio_hist and from bio (p50) records")

    # automatic step: at most 60 columns
    r.ok_run("heatmap", "-i", inp, "-o", svg)
    _, cells, _ = svg_cells(svg)
    cols = {t for t, _ in cells}
    expect(1 < len(cols) <= 60, f"automatic step gave {len(cols)} columns")
    ok(f"automatic step: {len(cols)} columns")


# ------------------------------------------------------------- topology

DOT_NODE = re.compile(r'^\t(n\d+) \[label="((?:[^"\\]|\\.)*)"')
DOT_EDGE = re.compile(r'^\t(n\d+) -> (n\d+) \[label="([^"]*)", '
                      r'penwidth=[0-9.]+, tooltip="(?:[^"\\]|\\.)*"'
                      r'(, color="#c01c28", fontcolor="#c01c28")?'
                      r'(?:, outcomes=(\d+), errors=(\d+))?, '
                      r'requests=(\d+)\];$')
UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}


def parse_dot(text):
    nodes, edges = {}, {}
    expect(text.startswith("digraph kmon {\n") and text.endswith("}\n"),
           "not a digraph")
    for line in text.splitlines():
        m = DOT_NODE.match(line)
        if m and " -> " not in line:
            nodes[m.group(1)] = m.group(2).replace('\\"', '"').replace(
                "\\\\", "\\")
            continue
        if " -> " in line:
            m = DOT_EDGE.match(line)
            expect(m, f"edge line not understood: {line}")
            key = (nodes[m.group(1)], nodes[m.group(2)])
            expect(key not in edges, f"edge twice: {key}")
            lm = re.fullmatch(r"([0-9.]+)(k|M|G)? req/s, ([0-9.]+)(k|M|G)? "
                              r"B/s\\np95 ([0-9.]+) "
                              r"(ns|\u00b5s|ms|s)(?:\\n(\S+) errors)?\\n ",
                              m.group(3))
            expect(lm, f"edge label {m.group(3)!r}")
            scale = {None: 1, "k": 1e3, "M": 1e6, "G": 1e9}
            rate = float(lm.group(1)) * scale[lm.group(2)]
            outcomes = None if m.group(5) is None else \
                (int(m.group(5)), int(m.group(6)), lm.group(7),
                 m.group(4) is not None)
            expect(outcomes or (not lm.group(7) and not m.group(4)),
                   f"an error rate without outcomes: {line}")
            edges[key] = (int(m.group(7)), rate,
                          float(lm.group(5)) * UNITS[lm.group(6)],
                          float(lm.group(3)) * scale[lm.group(4)],
                          outcomes)
    return nodes, edges


def topology_records():
    rnd = random.Random(11)
    pairs = [("frontend", "backend"), ("backend", "db"),
             ("backend", "cache"), ("frontend", "auth"), (None, "frontend"),
             ('we"ird\\name', "backend")]
    recs = []
    for i in range(10):  # ten 1 s intervals, a few ns apart within one
        for j, (s, d) in enumerate(pairs):
            if rnd.random() < 0.3:
                continue
            req = rnd.randint(0, 500)
            p50 = rnd.randint(10_000, 2_000_000)
            recs.append({"kind": "topology", "ts": T0 + i * 10**9 + j * 7,
                         "node": "vm", "src": s, "dst": d, "requests": req,
                         "bytes": req * 300, "latency_p50_ns": p50,
                         "latency_p95_ns": p50 * 3 + j,
                         "latency_p99_ns": p50 * 5})
    return recs


def percent(fraction):
    """consumers/common/percent.c's way of writing an error rate."""
    pct = fraction * 100
    if pct == 0 or pct >= 0.1:
        return "%.1f%%" % pct
    return "%.2g%%" % pct if pct >= 0.001 else "<0.001%"


def expected_outcomes(outcomes, errors):
    """(outcomes, errors, the label's rate, red) as parse_dot reads them;
    None for an edge none of whose records carried outcomes."""
    if outcomes is None:
        return None
    return (outcomes, errors, percent(errors / outcomes) if outcomes
            else None, errors > 0)


def outcome_records(recs):
    """recs as a kmond with request outcomes would write some of them:
    backend -> db with errors, frontend -> backend without, frontend ->
    auth with outcomes 0 (none known); the other edges from a kmond
    before outcomes."""
    rnd = random.Random(12)
    out = []
    for x in recs:
        y = dict(x)
        pair = (x["src"], x["dst"])
        if pair == ("backend", "db"):
            y["outcomes"] = x["requests"]
            y["errors"] = rnd.randint(0, x["requests"] // 10)
        elif pair == ("frontend", "backend"):
            y["outcomes"], y["errors"] = x["requests"], 0
        elif pair == ("frontend", "auth"):
            y["outcomes"], y["errors"] = 0, 0
        elif pair == ("backend", "cache"):
            y["outcomes"], y["errors"] = x["requests"], 1
        out.append(y)
    return out


def expected_edges(recs, interval_ns, pred=None):
    recs = [x for x in recs if not pred or pred(x)]
    span = (max(x["ts"] for x in recs) - min(x["ts"] for x in recs) +
            interval_ns) / 1e9
    out = {}
    for x in recs:
        key = (x["src"] or "(unknown)", x["dst"] or "(unknown)")
        req, p95, outcomes, errors = out.get(key, (0, 0, None, 0))
        if x["requests"]:
            p95 = max(p95, x["latency_p95_ns"])
        if "outcomes" in x:
            outcomes = (outcomes or 0) + x["outcomes"]
            errors += x["errors"]
        out[key] = (req + x["requests"], p95, outcomes, errors)
    return {k: (req, req / span, p95, req * 300 / span,
                expected_outcomes(outcomes, errors))
            for k, (req, p95, outcomes, errors) in out.items()}


def compare_edges(got, want, what):
    expect(set(got) == set(want),
           f"{what}: edges {sorted(got)} != {sorted(want)}")
    for k, (req, rate, p95, bps, outcomes) in want.items():
        g = got[k]
        expect(g[4] == outcomes, f"{what} {k}: outcomes, errors, rate, red "
               f"{g[4]}, want {outcomes}")
        expect(abs(g[3] - bps) <= max(1, bps * 0.01),
               f"{what} {k}: {g[3]} B/s, want {bps:.1f}")
        expect(g[0] == req, f"{what} {k}: requests {g[0]}, want {req}")
        expect(abs(g[1] - rate) <= max(0.011, rate * 0.01),
               f"{what} {k}: {g[1]} req/s, want {rate:.3f}")
        expect(abs(g[2] - p95) <= p95 * 0.01 + 1,
               f"{what} {k}: p95 {g[2]}, want {p95}")


def topology_check(r):
    recs = topology_records()
    inp = r.write("topo.json", recs + [{"kind": "stats", "ts": T0,
                                        "node": "vm"}])
    nodes, edges = parse_dot(r.ok_run("topology", "-i", inp))
    compare_edges(edges, expected_edges(recs, 10**9), "DOT")
    expect(len(set(nodes.values())) == len(nodes), "a node twice")
    ok(f"DOT: exactly the {len(edges)} input edges, requests/s over the "
       "estimated 1 s interval, p95 the highest per interval")
    _, edges = parse_dot(r.ok_run("topology", "-i", inp, "--interval", "2s"))
    compare_edges(edges, expected_edges(recs, 2 * 10**9), "DOT --interval")
    _, edges = parse_dot(r.ok_run("topology", "-i", inp, "--service",
                                  "backend", "--to", "1700000005"))
    compare_edges(edges, expected_edges(
        recs, 10**9, lambda x: "backend" in (x["src"], x["dst"]) and
        x["ts"] < T0 + 5 * 10**9), "DOT --service --to")
    ok("DOT with --interval, --service and --to")

    dotfile = r.path("topo.dot")
    r.ok_run("topology", "-i", inp, "-o", dotfile)
    _, edges = parse_dot(open(dotfile, encoding="utf-8").read())
    compare_edges(edges, expected_edges(recs, 10**9), "-o FILE.dot")

    svg = r.path("topo.svg")
    r.ok_run("topology", "-i", inp, "-o", svg)
    root = ET.parse(svg).getroot()
    groups = defaultdict(list)
    for g in root.iter(SVG + "g"):
        groups[g.get("class")].append(g)
    expect(len(groups["edge"]) == len(edges),
           f"SVG has {len(groups['edge'])} edges, want {len(edges)}")
    labels = {"".join(t.text or "" for t in g.iter(SVG + "text"))
              for g in groups["node"]}
    want_nodes = {n for e in edges for n in e}
    expect(labels == want_nodes, f"SVG nodes {labels} != {want_nodes}")
    texts = " ".join(t.text or "" for g in groups["edge"]
                     for t in g.iter(SVG + "text"))
    expect(texts.count("req/s") == len(edges) and
           texts.count("p95") == len(edges), "edge labels missing in SVG")
    ok(f"SVG through dot: {len(edges)} labelled edges, "
       f"{len(want_nodes)} service nodes")

    # request outcomes on some edges: summed, the error rate on the
    # label, red with any error; the other edges as before
    orecs = outcome_records(recs)
    inp = r.write("outcomes.json", orecs)
    _, edges = parse_dot(r.ok_run("topology", "-i", inp))
    want = expected_edges(orecs, 10**9)
    compare_edges(edges, want, "DOT with outcomes")
    red = sum(1 for v in want.values() if v[4] and v[4][3])
    expect(red >= 2 and sum(1 for v in want.values() if v[4]) > red and
           sum(1 for v in want.values() if not v[4]) >= 2,
           f"outcome_records: {red} red edges, cases missing")
    svg = r.path("outcomes.svg")
    r.ok_run("topology", "-i", inp, "-o", svg)
    root = ET.parse(svg).getroot()
    strokes = [p.get("stroke") for g in root.iter(SVG + "g")
               if g.get("class") == "edge" for p in g.iter(SVG + "path")]
    expect(strokes.count("#c01c28") == red,
           f"SVG: {strokes.count('#c01c28')} red edges, want {red}")
    texts = " ".join(t.text or "" for g in root.iter(SVG + "g")
                     if g.get("class") == "edge" for t in g.iter(SVG + "text"))
    expect(texts.count("errors") == sum(1 for v in want.values()
                                        if v[4] and v[4][2]),
           "SVG: error rates missing on edge labels")
    ok(f"outcomes: {len(want)} edges, {red} red, error rates summed over "
       "records; edges without outcomes unchanged")

    # a serving node shows the protocol of most requests to it
    protos = {"backend": ["http", "http", "grpc"], "db": ["postgresql"],
              "cache": ["unknown"]}
    precs = []
    for i, x in enumerate(r for r in recs if r["dst"] in protos):
        y = dict(x)
        y["protocol"] = protos[x["dst"]][i % len(protos[x["dst"]])]
        y["requests"] = 10 if y["protocol"] != "grpc" else 1
        precs.append(y)
    nodes, _ = parse_dot(r.ok_run("topology", "-i",
                                  r.write("proto.json", precs)))
    labels = set(nodes.values())
    expect({"backend\\nhttp", "db\\npostgresql", "cache"} <= labels,
           f"node labels {labels}")
    ok("nodes labelled with their protocol (unknown left out)")


# --------------------------------------------------------------- errors

GOOD = {"kind": "offcpu", "ts": T0, "node": "vm", "pid": 1, "comm": "c",
        "service": None, "stack": ["f+0x1"], "total_ns": 10, "count": 1}
GOOD_LINE = json.dumps(GOOD) + "\n"


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


def errors_check(r):
    cases = [
        # (name, subcommand args, file content, expected stderr line)
        ("not JSON", ["flame"], GOOD_LINE * 2 + "{\"kind\": offcpu}\n",
         "{f}:3: not JSON (column 10): expected a value, got 'o'"),
        ("truncated line", ["flame"], GOOD_LINE + '{"kind":"offcpu",\n',
         "{f}:2: not JSON (column 18): expected a string key in an "
         "object, got end of input"),
        ("not an object", ["flame"], GOOD_LINE + "[1,2]\n",
         "{f}:2: expected a JSON object, got an array"),
        ("no kind", ["flame"], GOOD_LINE + '{"ts":1}\n',
         "{f}:2: kind: missing"),
        ("missing total_ns", ["flame"],
         GOOD_LINE + json.dumps(without(GOOD, "total_ns")) + "\n",
         '{f}:2: offcpu record: missing "total_ns"'),
        ("missing ts", ["flame"], json.dumps(without(GOOD, "ts")) + "\n",
         '{f}:1: offcpu record: missing "ts"'),
        ("string count", ["flame"],
         json.dumps(dict(GOOD, count="3")) + "\n",
         '{f}:1: offcpu record: "count": expected a non-negative '
         "integer, got a string"),
        ("negative total", ["flame"],
         json.dumps(dict(GOOD, total_ns=-5)) + "\n",
         '{f}:1: offcpu record: "total_ns": expected a non-negative '
         "integer, got a negative integer"),
        ("stack item", ["flame"],
         json.dumps(dict(GOOD, stack=["a", 7])) + "\n",
         '{f}:1: offcpu record: "stack"[1]: expected a string, got an '
         "integer"),
        ("stack not array", ["flame"],
         json.dumps(dict(GOOD, stack="a;b")) + "\n",
         '{f}:1: offcpu record: "stack": expected an array, got a string'),
        ("duplicate key", ["flame"], '{"kind":"offcpu","kind":"bio"}\n',
         "{f}:1: not JSON (column 18): duplicate key \"kind\""),
        ("empty", ["flame"], "", "{f}: empty input: no records"),
        ("blank lines only", ["flame"], "\n  \n", "{f}: empty input: no "
         "records"),
        ("no offcpu", ["flame"],
         '{"kind":"syscall","ts":1,"node":"vm"}\n',
         "{f}: no offcpu records"),
        ("no off-CPU time", ["flame"],
         json.dumps(dict(GOOD, total_ns=0)) + "\n",
         "{f}: the offcpu records hold no off-CPU time (total_ns is 0 in "
         "all 1)"),
        ("bad bucket", ["heatmap"],
         '{"kind":"offcpu_hist","ts":1,"node":"n","buckets":[[1,2],[3]]}\n',
         '{f}:1: offcpu_hist record: "buckets"[1]: expected [low_ns, '
         "count] (two non-negative integers)"),
        ("no heatmap records", ["heatmap", "--bio"], GOOD_LINE,
         "{f}: no bio or bio_hist records"),
        ("topology field", ["topology"],
         '{"kind":"topology","ts":1,"node":"n","src":"a","dst":"b",'
         '"requests":1,"bytes":1,"latency_p50_ns":1,"latency_p95_ns":1}\n',
         '{f}:1: topology record: missing "latency_p99_ns"'),
        ("topology outcomes without errors", ["topology"],
         '{"kind":"topology","ts":1,"node":"n","src":"a","dst":"b",'
         '"requests":1,"bytes":1,"latency_p50_ns":1,"latency_p95_ns":1,'
         '"latency_p99_ns":1,"outcomes":1}\n',
         '{f}:1: topology record: missing "errors"'),
        ("topology src", ["topology"],
         '{"kind":"topology","ts":1,"node":"n","src":5}\n',
         '{f}:1: topology record: "src": expected a string or null, '
         "got an integer"),
        ("invalid UTF-8", ["flame"], b'{"kind":"offcpu","comm":"\xff"}\n',
         "{f}:1: not JSON (column 26): invalid UTF-8 in a string"),
    ]
    for name, args, content, want in cases:
        f = r.path("bad.json")
        with open(f, "wb") as fh:
            fh.write(content if isinstance(content, bytes) else
                     content.encode())
        out = r.path("never.svg")
        p = r.run(*args, "-i", f, "-o", out)
        err = p.stderr.decode(errors="replace")
        expect(p.returncode == 2, f"{name}: exit {p.returncode}, want 2 "
               f"({err.strip()})")
        expect(err == want.format(f=f) + "\n",
               f"{name}: stderr {err!r}, want {want.format(f=f)!r}")
        expect(not os.path.exists(out) and
               not any(n.startswith("never.svg") for n in
                       os.listdir(r.work)),
               f"{name}: an output file was left behind")
    ok(f"{len(cases)} kinds of bad input: FILE:LINE messages, exit 2, "
       "no output file")

    p = r.run("flame", "-i", "-", stdin=b"")
    expect(p.returncode == 2 and
           p.stderr == b"<stdin>: empty input: no records\n",
           f"empty stdin: {p.stderr!r}")
    p = r.run("flame", "-i", r.path("missing.json"))
    expect(p.returncode == 2 and b"cannot open: No such file" in p.stderr,
           f"missing file: {p.stderr!r}")
    for args in (["flame"], ["flame", "-i", "x", "-b", "b"],
                 ["nosuch", "-i", "x"], ["topology", "-i", "x", "--pid", "1"],
                 ["flame", "-i", "x", "--bio"], ["flame", "-i", "x",
                                                 "--from", "yesterday"],
                 ["heatmap", "-i", "x", "--step", "0s"],
                 ["flame", "-i", "x", "--root", "tree"],
                 ["flame", "-i", "x", "--from", "20", "--to", "10"]):
        p = r.run(*args)
        expect(p.returncode == 2 and b"usage:" in p.stderr,
               f"usage error {args}: exit {p.returncode}")
    ok("usage errors exit 2 with the usage text")
    # an unwritable output is a runtime failure (exit 1)
    p = r.run("flame", "-i", r.write("good.json", [GOOD]), "-o",
              r.path("no/such/dir.svg"))
    expect(p.returncode == 1 and b"cannot create" in p.stderr,
           f"unwritable output: {p.returncode} {p.stderr!r}")
    ok("unwritable output: exit 1")


def sample(r):
    r.write("off.json", offcpu_records(300, 7) + awkward_records())
    r.write("topo.json", topology_records())


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    r = Runner(sys.argv[1], sys.argv[2])
    {"flame": flame_check, "heatmap": heatmap_check,
     "topology": topology_check, "errors": errors_check,
     "sample": sample}[sys.argv[3]](r)


main()
