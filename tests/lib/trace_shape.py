#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks kmon-trace's OTLP JSON made from real kmond records of the
two-tier application of tests/lib/link_svc.py against its ground truth.

trace_shape.py TRACES.otlp MID.log --mid NAME --back NAME

One trace per front request (the log's REQ lines), each of this shape:
the middle service's SERVER span at the root, one CLIENT span of it per
call it logged for that request, each the parent of exactly one SERVER
span of the back service. Requests are told apart by the front port
(client.port of the root) and their order on that connection."""
import argparse
import collections
import json
import sys

SERVER, CLIENT = 2, 3


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def attrs(lst):
    out = {}
    for a in lst:
        v = a["value"]
        out[a["key"]] = next(iter(v.values()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("otlp")
    ap.add_argument("log")
    ap.add_argument("--mid", required=True)
    ap.add_argument("--back", required=True)
    a = ap.parse_args()

    traces = collections.defaultdict(list)
    for line in open(a.otlp):
        for rs in json.loads(line)["resourceSpans"]:
            svc = attrs(rs["resource"]["attributes"])["service.name"]
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    s["service"] = svc
                    s["attrs"] = attrs(s.get("attributes", []))
                    traces[s["traceId"]].append(s)

    calls = collections.Counter()
    reqs = []
    for line in open(a.log):
        f = line.split()
        if f[0] == "REQ":
            reqs.append((int(f[1]), int(f[2])))
        else:
            calls[(int(f[1]), int(f[2]))] += 1
    if len(traces) != len(reqs):
        fail(f"{len(traces)} traces for {len(reqs)} front requests")

    roots = collections.defaultdict(list)  # front port -> (start, ncalls)
    for tid, spans in traces.items():
        by_id = {s["spanId"]: s for s in spans}
        top = [s for s in spans if not s.get("parentSpanId")]
        if len(top) != 1:
            fail(f"trace {tid}: {len(top)} roots")
        root = top[0]
        if root["kind"] != SERVER or root["service"] != a.mid:
            fail(f"trace {tid}: root {root['service']} kind {root['kind']}")
        kids = collections.Counter(s.get("parentSpanId") for s in spans)
        n = 0
        for s in spans:
            if s is root:
                continue
            parent = by_id.get(s["parentSpanId"])
            if parent is None:
                fail(f"trace {tid}: span {s['spanId']} has no parent here")
            if s["kind"] == CLIENT:
                if s["service"] != a.mid or parent is not root:
                    fail(f"trace {tid}: a call not under the root")
                if kids[s["spanId"]] != 1:
                    fail(f"trace {tid}: a call with {kids[s['spanId']]} "
                         f"server spans under it")
                n += 1
            elif s["service"] != a.back or parent["kind"] != CLIENT:
                fail(f"trace {tid}: server span {s['service']} under "
                     f"{parent['service']} kind {parent['kind']}")
        roots[int(root["attrs"]["client.port"])].append(
            (int(root["startTimeUnixNano"]), n))
    for port, rs in roots.items():
        rs.sort()
        for k, (_, n) in enumerate(rs):
            if n != calls[(port, k)]:
                fail(f"request {k} from port {port}: {n} calls in its "
                     f"trace, {calls[(port, k)]} made")
    print(f"{len(traces)} traces, {sum(calls.values())} calls, each in "
          f"its request's trace with the back's server span under it")


if __name__ == "__main__":
    main()
