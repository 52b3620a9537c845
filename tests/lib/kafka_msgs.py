#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks what kcat read from the broker (kcat -C -J: one JSON envelope per
message) against kmond's contract and against the file sink.

kafka_msgs.py payloads KCAT...
    prints every message's value, one per line (JSON lines, so
    records.py can query them)
kafka_msgs.py check KCAT --kind K [--node N]
    every message: value is one JSON record of kind K, headers kind=K,
    node=(the record's node, and N when given) and service=(the record's
    service, or its pid when it has none); key = that too (no key for
    records about no process), but a tcp record's key is its req_seq.
    Prints the number of messages.
kafka_msgs.py pairs KCAT [--via ADDR]
    joins the client-side and server-side tcp messages by (client port,
    req_seq, resp_seq): every client message joins exactly one server
    message and each pair shares its partition. Prints the pairs (those
    whose client called ADDR with --via).
kafka_msgs.py same FILE KCAT... [--kind K]
    the file sink's lines (of kind K) and the messages' values are the
    same multiset of byte strings: nothing lost, nothing duplicated."""
import argparse
import collections
import json
import sys


def envelopes(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as e:
                    sys.exit(f"{path}:{n}: not a kcat -J line: {e}")


def headers(env):
    h = env.get("headers") or []
    return dict(zip(h[0::2], h[1::2]))


def check(a):
    n = 0
    for env in envelopes(a.kcat):
        where = f"{a.kcat}: offset {env['offset']} partition {env['partition']}"
        try:
            rec = json.loads(env["payload"])
        except (TypeError, ValueError) as e:
            sys.exit(f"{where}: value is not JSON: {e}")
        h = headers(env)
        want_key = None
        if "pid" in rec:
            svc = rec.get("service")
            want_key = svc if svc is not None else str(rec["pid"])
            if h.get("service") != want_key:
                problems.append(f"service header {h.get('service')!r}, "
                                f"want {want_key!r}")
        if rec.get("kind") == "tcp" and "req_seq" in rec:
            want_key = str(rec["req_seq"])
        problems = []
        if rec.get("kind") != a.kind:
            problems.append(f"record kind {rec.get('kind')!r}")
        if h.get("kind") != a.kind:
            problems.append(f"kind header {h.get('kind')!r}")
        if h.get("node") != rec.get("node"):
            problems.append(f"node header {h.get('node')!r} != {rec.get('node')!r}")
        if a.node is not None and h.get("node") != a.node:
            problems.append(f"node header {h.get('node')!r}, want {a.node!r}")
        if env.get("key") != want_key:
            problems.append(f"key {env.get('key')!r}, want {want_key!r}")
        if problems:
            sys.exit(f"{where}: " + "; ".join(problems))
        n += 1
    print(n)


def tcp_messages(path, side):
    for env in envelopes(path):
        rec = json.loads(env["payload"])
        if rec.get("kind") == "tcp" and rec.get("side") == side:
            yield env["partition"], rec


def pairs(a):
    servers = collections.defaultdict(list)
    for part, r in tcp_messages(a.kcat, "server"):
        servers[(r["rport"], r["req_seq"], r["resp_seq"])].append(part)
    n = via = 0
    partitions = set()
    for part, c in tcp_messages(a.kcat, "client"):
        key = (c["lport"], c["req_seq"], c["resp_seq"])
        match = servers.pop(key, [])
        if len(match) != 1:
            sys.exit(f"client message joins {len(match)} server messages: "
                     f"{json.dumps(c)}")
        if match[0] != part:
            sys.exit(f"client in partition {part}, its server in "
                     f"{match[0]}: {json.dumps(c)}")
        partitions.add(part)
        n += 1
        via += c["raddr"] == a.via
    if servers:
        sys.exit(f"{len(servers)} server messages join no client message")
    print(f"{n} {via} {len(partitions)}")


def same(a):
    want = collections.Counter()
    with open(a.file, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and (not a.kind or json.loads(line)["kind"] == a.kind):
                want[line] += 1
    got = collections.Counter()
    for path in a.kcat:
        for env in envelopes(path):
            got[env["payload"]] += 1
    missing = want - got
    extra = got - want
    for what, c in (("missing from kafka", missing), ("only in kafka", extra)):
        for line, k in list(c.items())[:5]:
            print(f"{what} (x{k}): {line}", file=sys.stderr)
    print(f"file {sum(want.values())} kafka {sum(got.values())} "
          f"missing {sum(missing.values())} extra {sum(extra.values())}")
    sys.exit(1 if missing or extra else 0)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("payloads")
    p.add_argument("kcat", nargs="+")
    p = sub.add_parser("check")
    p.add_argument("kcat")
    p.add_argument("--kind", required=True)
    p.add_argument("--node")
    p = sub.add_parser("pairs")
    p.add_argument("kcat")
    p.add_argument("--via")
    p = sub.add_parser("same")
    p.add_argument("file")
    p.add_argument("kcat", nargs="+")
    p.add_argument("--kind")
    a = ap.parse_args()
    if a.cmd == "payloads":
        for path in a.kcat:
            for env in envelopes(path):
                print(env["payload"])
    elif a.cmd == "check":
        check(a)
    elif a.cmd == "pairs":
        pairs(a)
    else:
        same(a)


main()
