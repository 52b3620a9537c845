#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the tcp records of tcp_svc.py's server against what its clients
asked and measured: req_bytes - 100 is the service time in ms, the
response is exactly 1000 + ms bytes, the latency is at least the service
time and at most the client's own measure of the call (the clients'
--log: from before the request is sent to having the whole answer, which
encloses the server's side on any machine, however slow: a loaded one
oversleeps, a slow guest's Python takes milliseconds to start its clock).
Requests of one client port and service time are paired in order of
latency: if each record is within its own call, the sorted ones are too.

tcp_check.py FILE --pid PID --log CLIENT_LOG
Prints "FAMILY LADDR MS COUNT" per group, sorted; exits 1 on a bad one."""
import argparse
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    groups = collections.Counter()
    seen = collections.defaultdict(list)  # (rport, ms) -> latencies
    bad = 0
    with open(a.file, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] != "tcp" or r["pid"] != a.pid:
                continue
            ms = r["req_bytes"] - 100
            if r["resp_bytes"] != 1000 + ms or r["latency_ns"] < ms * 1e6:
                print(f"bad record: {line.strip()}", file=sys.stderr)
                bad += 1
            groups[(r["family"], r["laddr"], ms)] += 1
            seen[(r["rport"], ms)].append(r["latency_ns"])
    measured = collections.defaultdict(list)
    with open(a.log, encoding="utf-8") as f:
        for line in f:
            port, ms, ns = (int(x) for x in line.split())
            measured[(port, ms)].append(ns)
    for key, lat in seen.items():
        want = sorted(measured.get(key, []))
        if len(want) != len(lat):
            print(f"port {key[0]}, {key[1]} ms: {len(lat)} records, "
                  f"{len(want)} calls made", file=sys.stderr)
            bad += 1
            continue
        for got, ns in zip(sorted(lat), want):
            if got > ns:
                print(f"port {key[0]}, {key[1]} ms: latency {got} ns, "
                      f"the client measured {ns} ns", file=sys.stderr)
                bad += 1
    for (family, laddr, ms), n in sorted(groups.items()):
        print(family, laddr, ms, n)
    sys.exit(1 if bad else 0)


main()
