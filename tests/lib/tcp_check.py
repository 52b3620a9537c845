#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the tcp records of tcp_svc.py's server against what its client
asked: req_bytes - 100 is the service time in ms, the response is exactly
1000 + ms bytes, and the latency is the service time plus a small
overhead (>= ms, <= ms * (1 + SLACK) + 2 ms).

tcp_check.py FILE --pid PID [--slack 0.05]
Prints "FAMILY LADDR MS COUNT" per group, sorted; exits 1 on a bad one."""
import argparse
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--slack", type=float, default=0.05)
    a = ap.parse_args()
    groups = collections.Counter()
    bad = 0
    with open(a.file, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] != "tcp" or r["pid"] != a.pid:
                continue
            ms = r["req_bytes"] - 100
            lo = ms * 1000000
            hi = lo * (1 + a.slack) + 2000000
            if r["resp_bytes"] != 1000 + ms or not lo <= r["latency_ns"] <= hi:
                print(f"bad record (want {lo}..{hi:.0f} ns): {line.strip()}",
                      file=sys.stderr)
                bad += 1
            groups[(r["family"], r["laddr"], ms)] += 1
    for (family, laddr, ms), n in sorted(groups.items()):
        print(family, laddr, ms, n)
    sys.exit(1 if bad else 0)


main()
