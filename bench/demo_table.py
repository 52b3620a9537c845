#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The table of bench/demo-overhead.sh: the shop's response time
without kmond, with kmond and with the floor programs next to the Kmon
paper's, and kmond's cost.

  demo_table.py WORK NCPU
WORK holds `rounds` (round mode wall_s cpu_s hwm_kib loadavg, one line
a round and mode; mode off, on or floor), MODE-ROUND.jsonl
(demo/loadgen.py's log of the round) and records.json (kmond's records,
every round with kmond)."""
import json
import math
import os
import statistics
import sys

PAPER = {"mean": (348.97, 361.97), "p95": (784.09, 790.09), "p99": (None, None)}
# two-sided 95% Student t, by degrees of freedom
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
       9: 2.26, 10: 2.23, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)] if df >= 1 else float("nan")


def stats_of(latencies):
    lat = sorted(latencies)
    pick = lambda p: lat[min(len(lat) - 1, int(p / 100 * len(lat)))]
    return {"mean": sum(lat) / len(lat), "p95": pick(95), "p99": pick(99)}


def main():
    work, ncpu = sys.argv[1], int(sys.argv[2])
    rounds = [line.split() for line in open(os.path.join(work, "rounds"))]
    per = {}  # (mode, round) -> stats
    pooled = {"off": [], "on": [], "floor": []}
    requests_on = 0
    for r, mode, *_ in rounds:
        lat = [json.loads(line)["latency_ms"] for line in open(os.path.join(work, f"{mode}-{r}.jsonl"))]
        per[(mode, r)] = stats_of(lat)
        pooled[mode] += lat
        if mode == "on":
            requests_on += len(lat)
    pool = {mode: stats_of(lat) for mode, lat in pooled.items() if lat}
    ids = sorted({r for r, *_ in rounds}, key=int)
    loads = [float(line[5]) for line in rounds if len(line) > 5]
    print(f"\n{len(ids)} rounds, requests: " +
          ", ".join(f"{len(lat)} {mode}" for mode, lat in pooled.items()) +
          (f"; load average {min(loads):.2f} .. {max(loads):.2f}" if loads else ""))
    print("change: pooled requests of every round; in brackets the mean of the"
          " rounds' changes +- its 95% confidence interval (Student t)\n")
    print("| response time (ms) | Kmon paper: without | with | change "
          "| kmond: without | with kmond | change | with the floor | change |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in ("mean", "p95", "p99"):
        p_off, p_on = PAPER[k]
        paper = f"{p_off} | {p_on} | {(p_on - p_off) / p_off * 100:+.1f}%" if p_off else "- | - | -"
        cells = [paper, f"{pool['off'][k]:.2f}"]
        for mode in ("on", "floor"):
            if mode not in pool:
                cells.append("- | -")
                continue
            diffs = [(per[(mode, r)][k] - per[("off", r)][k]) / per[("off", r)][k] * 100
                     for r in ids if (mode, r) in per]
            half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs)) \
                if len(diffs) > 1 else float("nan")
            whole = (pool[mode][k] - pool["off"][k]) / pool["off"][k] * 100
            cells.append(f"{pool[mode][k]:.2f} | {whole:+.1f}% ({statistics.mean(diffs):+.1f}% +- {half:.1f})")
        print(f"| {k} | " + " | ".join(cells) + " |")
    wall = sum(float(w) for _, m, w, *_ in rounds if m == "on")
    cpu = sum(float(c) for _, m, _, c, *_ in rounds if m == "on")
    hwm = max(int(h) for _, m, _, _, h, *_ in rounds if m == "on")
    records = sum(1 for _ in open(os.path.join(work, "records.json")))
    print(f"\n| kmond | Kmon paper | kmond |\n|---|---|---|")
    print(f"| CPU, share of the node | 9.55% | {cpu / wall / ncpu * 100:.2f}% ({ncpu} CPUs) |")
    print(f"| CPU per user request | - | {cpu / requests_on * 1e6:.0f} us |")
    print(f"| peak memory | 616 MiB | {hwm / 1024:.1f} MiB |")
    print(f"| records a second | - | {records / wall:.0f} |")


if __name__ == "__main__":
    main()
