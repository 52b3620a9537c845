#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks request outcomes (docs/design/outcomes.md) in kmond's records.

outcome_check.py exact FILE --side SIDE --port PORT --expect EXPECT
    The tcp records of SIDE on connections to PORT (lport on the server
    side, rport on the client side), each reduced to its outcome fields
    (status, error, grpc_status, method, route; an absent field stays
    absent), must be exactly the multiset EXPECT lists: JSON lines
    {"n": COUNT, FIELD: VALUE, ...}. Prints what is missing and what is
    extra, with a record of each extra kind.

outcome_check.py http-expect LOG --side SIDE --req-head BYTES
    Turns an nginx access log of tests/lib/nginx.sh (lines "status
    bytes_sent request_length method request_uri") into EXPECT lines for
    SIDE: the status, the method, the route (the path with numbers, UUIDs
    and hex strings of 16 digits or more folded to {id}, the query
    dropped), error by OpenTelemetry's rule for SIDE (server: 5xx; client:
    4xx and 5xx). A path that runs past the request head kmond captures
    (BYTES: OUTCOME_REQ_HEAD) has no route: never a cut one.
    A request nginx answered with no bytes (its client left) is left out.

outcome_check.py aggregates FILE [--service NAME]... [--endpoint ADDR:PORT]...
    For each server-side service: the topology edges' outcomes, errors
    and status_1xx..status_5xx summed over the run equal the same counts
    over its server-side tcp records, and so do its load records'
    outcomes and errors. For each endpoint, the client-side load records'
    outcomes and errors equal the counts over the client-side tcp records
    to it. Needs requests: all. Fails when there is nothing to compare.

outcome_check.py routes FILE --service NAME --bound N
    Prints the number of distinct routes of the service's server-side
    records and how many are "other"; fails when there are more than N
    routes besides "other"."""
import argparse
import collections
import json
import re
import sys

OUTCOME = ("status", "error", "grpc_status", "method", "route")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                  r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX = re.compile(r"^[0-9a-fA-F]{16,}$")


def records(path, kind):
    with open(path, encoding="utf-8") as f:
        return [r for r in map(json.loads, f) if r["kind"] == kind]


def outcome(rec):
    return tuple((k, rec[k]) for k in OUTCOME if k in rec)


def show(key):
    return json.dumps(dict(key), sort_keys=True)


def exact(a):
    port_field = "lport" if a.side == "server" else "rport"
    got = collections.Counter()
    sample = {}
    for r in records(a.file, "tcp"):
        if r.get("side") == a.side and r[port_field] == a.port:
            got[outcome(r)] += 1
            sample.setdefault(outcome(r), r)
    want = collections.Counter()
    with open(a.expect, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            want[tuple((k, e[k]) for k in OUTCOME if k in e)] += e["n"]
    bad = False
    for key in sorted(set(got) | set(want), key=show):
        mark = "ok"
        if got[key] != want[key]:
            mark, bad = "WRONG", True
        print(f"{mark}: {a.side} {show(key)}: {got[key]} records, want {want[key]}")
        if got[key] > want[key]:
            print(f"    e.g. {json.dumps(sample[key])}")
    if bad:
        sys.exit(f"{a.side} side: the records' outcomes are not the requests'")
    print(f"ok: {sum(want.values())} {a.side}-side outcomes exact")


def fold(segment):
    if segment.isdigit() or UUID.match(segment) or HEX.match(segment):
        return "{id}"
    return segment


def http_expect(a):
    want = collections.Counter()
    with open(a.log, encoding="utf-8") as f:
        for line in f:
            status, sent, _, method, uri = line.split()
            if int(sent) == 0:
                continue
            status = int(status)
            path = uri.split("?")[0]
            route = None
            if len(f"{method} {path}") < a.req_head:
                route = "/".join(fold(s) for s in path.split("/"))
            error = status >= 500 or (a.side == "client" and status >= 400)
            want[(status, error, method, route)] += 1
    for (status, error, method, route), n in sorted(want.items(), key=str):
        e = {"n": n, "status": status, "error": error, "method": method}
        if route:
            e["route"] = route
        print(json.dumps(e))


def tally(recs):
    """outcomes, errors and HTTP status classes of tcp records"""
    t = collections.Counter()
    for r in recs:
        # a status without an outcome too: gRPC's 200, its grpc-status unread
        if r.get("protocol") in ("http", "http2") and isinstance(r.get("status"), int):
            t[f"status_{r['status'] // 100}xx"] += 1
        if "error" not in r:
            continue
        t["outcomes"] += 1
        t["errors"] += r["error"]
    return t


def summed(recs, fields):
    t = collections.Counter()
    for r in recs:
        for k in fields:
            t[k] += r.get(k, 0)
    return t


def compare(what, got, want, fields):
    bad = [k for k in fields if got[k] != want[k]]
    for k in fields:
        print(f"{'ok' if k not in bad else 'WRONG'}: {what} {k} {got[k]}, records say {want[k]}")
    if not want["outcomes"]:
        bad.append("no outcome in the records")
    return bad


def aggregates(a):
    tcp = records(a.file, "tcp")
    topo = records(a.file, "topology")
    load = records(a.file, "load")
    classes = [f"status_{c}xx" for c in range(1, 6)]
    bad = []
    for svc in a.service:
        recs = [r for r in tcp if r.get("side") == "server" and r["service"] == svc]
        want = tally(recs)
        edges = [t for t in topo if t["side"] == "server" and t["dst"] == svc]
        bad += compare(f"topology to {svc}:", summed(edges, ["outcomes", "errors"] + classes),
                       want, ["outcomes", "errors"] + classes)
        rows = [r for r in load if r["side"] == "server" and r.get("service") == svc]
        bad += compare(f"load of {svc}:", summed(rows, ["outcomes", "errors"]),
                       want, ["outcomes", "errors"])
    for ep in a.endpoint:
        addr, port = ep.rsplit(":", 1)
        recs = [r for r in tcp if r.get("side") == "client"
                and r["raddr"] == addr.strip("[]") and r["rport"] == int(port)]
        rows = [r for r in load if r["side"] == "client" and r.get("endpoint") == ep]
        bad += compare(f"load of endpoint {ep}:", summed(rows, ["outcomes", "errors"]),
                       tally(recs), ["outcomes", "errors"])
    if bad:
        sys.exit(f"aggregates differ from the records: {bad}")


def routes(a):
    n = collections.Counter(r.get("route") for r in records(a.file, "tcp")
                            if r.get("side") == "server" and r["service"] == a.service)
    named = len([k for k in n if k != "other"])
    print(f"{named} distinct routes and {n['other']} requests as other, "
          f"over {sum(n.values())} requests")
    if named > a.bound:
        sys.exit(f"{named} distinct routes, the bound is {a.bound}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("exact")
    p.add_argument("file")
    p.add_argument("--side", required=True, choices=("server", "client"))
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--expect", required=True)
    p = sub.add_parser("http-expect")
    p.add_argument("log")
    p.add_argument("--side", required=True, choices=("server", "client"))
    p.add_argument("--req-head", type=int, required=True)
    p = sub.add_parser("aggregates")
    p.add_argument("file")
    p.add_argument("--service", action="append", default=[])
    p.add_argument("--endpoint", action="append", default=[])
    p = sub.add_parser("routes")
    p.add_argument("file")
    p.add_argument("--service", required=True)
    p.add_argument("--bound", type=int, required=True)
    a = ap.parse_args()
    {"exact": exact, "http-expect": http_expect, "aggregates": aggregates,
     "routes": routes}[a.cmd](a)


if __name__ == "__main__":
    main()
