#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Scores kmond's protocol identification against the truth a test knows.

    proto_check.py OUT.json PORT=PROTO@SERVICE... [--min-f1 F] [--min-unknown R]

Each PORT is a server the test started with the protocol it speaks and
the service kmond names it (the `topology` edges to it must carry that
protocol for at least 99% of its requests). A
connection is the server side's 4-tuple in `tcp` records (its protocol
must be one for all its requests); an endpoint is the last `endpoint`
record of the port. Prints the confusion matrices (per connection and per
endpoint), the per-protocol F1 and their macro average; exits 1 when the
macro F1 (over the known protocols), the share of unknown-protocol
connections reported unknown, or any endpoint misses its target.
"""
import collections
import json
import sys


def matrix(title, pairs, labels):
    print(title)
    preds = sorted({p for _, p in pairs} | set(labels))
    width = max(len(x) for x in preds + ["truth \\ kmond"]) + 1
    print("".ljust(width) + "".join(p[:9].rjust(10) for p in preds))
    counts = collections.Counter(pairs)
    for t in labels:
        print(t.ljust(width) + "".join(str(counts[(t, p)]).rjust(10) for p in preds))


def main():
    out = sys.argv[1]
    truth, service, min_f1, min_unknown = {}, {}, 0.995, 0.99
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--min-f1":
            min_f1 = float(args.pop(0))
        elif a == "--min-unknown":
            min_unknown = float(args.pop(0))
        else:
            port, proto = a.split("=")
            proto, svc = proto.split("@")
            truth[int(port)] = proto
            service[svc] = proto
    conns = collections.defaultdict(set)
    endpoints = {}
    edges = collections.Counter()
    for line in open(out):
        r = json.loads(line)
        if r["kind"] == "tcp" and r.get("lport") in truth:
            conns[(r["lport"], r["raddr"], r["rport"])].add(r["protocol"])
        elif r["kind"] == "endpoint" and r["port"] in truth:
            endpoints[r["port"]] = r
        elif r["kind"] == "topology" and r["dst"] in service:
            edges[(r["dst"], r.get("protocol"))] += r["requests"]
    pairs = []
    for (port, _, _), protos in conns.items():
        pred = protos.pop() if len(protos) == 1 else "mixed"
        pairs.append((truth[port], pred))
    labels = sorted(set(truth.values()))
    matrix("per connection (rows: truth, columns: kmond)", pairs, labels)
    f1s = {}
    for p in labels:
        tp = sum(1 for t, q in pairs if t == p and q == p)
        fp = sum(1 for t, q in pairs if t != p and q == p)
        fn = sum(1 for t, q in pairs if t == p and q != p)
        f1s[p] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    known = [p for p in labels if p != "unknown"]
    macro = sum(f1s[p] for p in known) / len(known)
    print("F1: " + " ".join(f"{p}={f1s[p]:.3f}" for p in labels))
    print(f"macro F1 over {len(known)} protocols: {macro:.4f}")
    bad = []
    if macro < min_f1:
        bad.append(f"macro F1 {macro:.4f} < {min_f1}")
    unk = [q for t, q in pairs if t == "unknown"]
    if unk:
        share = sum(1 for q in unk if q == "unknown") / len(unk)
        print(f"unknown-protocol connections reported unknown: {share:.4f} of {len(unk)}")
        if share < min_unknown:
            bad.append(f"unknown share {share:.4f} < {min_unknown}")
    eps = [(truth[p], endpoints[p]["protocol"] if p in endpoints else "(none)")
           for p in sorted(truth)]
    matrix("per endpoint", eps, labels)
    for port, proto in sorted(truth.items()):
        e = endpoints.get(port)
        got = e["protocol"] if e else "(no endpoint record)"
        note = f"{e['agree']}/{e['connections']} agree" if e else ""
        print(f"  {port} {proto:11} -> {got} {note}")
        if got != proto:
            bad.append(f"endpoint {port} ({proto}) named {got}")
    print("topology: requests by edge protocol")
    for (dst, proto), n in sorted(edges.items()):
        print(f"  -> {dst:8} {proto:11} {n}")
    # An edge in an interval that ends before any of its connections
    # was decided (and whose server has no decided connection yet) is
    # honestly unknown: at most 1% of a server's requests, or one (ssh's
    # 48: its first connection's handshake takes seconds in a qemu guest,
    # past an interval's end).
    for dst, proto in service.items():
        total = sum(n for (d, _), n in edges.items() if d == dst)
        right = edges.get((dst, proto), 0)
        if total and right < min(0.99 * total, total - 1):
            bad.append(f"{total - right} of {total} requests to {dst} ({proto}) on edges named otherwise")
    for p in known:
        if not any(t == p for t, _ in pairs):
            bad.append(f"no connection of {p} seen")
    if bad:
        sys.exit("FAIL: " + "; ".join(bad))
    print("ok")


if __name__ == "__main__":
    main()
