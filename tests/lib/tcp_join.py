#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks client-side tcp records (the tcp collector's "side":"client").

tcp_join.py client FILE --port PORT --log SERVER_LOG
    The client-side records of calls to tcp_svc.py's server on PORT
    against what that unmonitored server measured (its --log): per
    client port, the records in order of time are the requests in the
    order the server served them: the same service time (req_bytes - 100
    ms), a response of exactly 1000 + ms bytes, and a latency at least the
    server's own timing up to its answer (the caller waits for all of it,
    and more).
    Prints the number of records.

tcp_join.py join CLIENT_FILE SERVER_FILE [--late-bytes N]
    Joins the client-side records of CLIENT_FILE to the server-side
    records of SERVER_FILE (the two ends of one exchange, maybe seen by
    two kmonds) by (client port, req_seq, resp_seq), addresses ignored
    (they differ through NAT): every record on either side must join
    exactly one on the other, with the same bytes, and the client's
    latency at least the server's. Prints the number of pairs.
    --late-bytes N: the client ports whose first record asks N bytes are
    connections older than kmond; that first call is the one kmond saw
    begin only when its send returned (the connection was unknown at its
    entry), when a loopback server may have read it already: its latency
    is not compared.

Exits 1 with the reasons on stderr when a check fails."""
import collections
import json
import sys


def records(path, side):
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] == "tcp" and r.get("side") == side:
                yield r


def check_client(path, port, log):
    bad = []
    got = collections.defaultdict(list)  # client port -> records
    for r in records(path, "client"):
        if r["rport"] == port:
            got[r["lport"]].append(r)
    served = collections.defaultdict(list)  # client port -> (ms, ns)
    with open(log, encoding="utf-8") as f:
        for line in f:
            port, ms, _, ns = (int(x) for x in line.split())
            served[port].append((ms, ns))
    for port in sorted(set(got) | set(served)):
        recs = sorted(got[port], key=lambda r: r["ts"])
        if len(recs) != len(served[port]):
            bad.append(f"port {port}: {len(recs)} client records, "
                       f"{len(served[port])} requests served")
            continue
        for r, (ms, ns) in zip(recs, served[port]):
            if r["req_bytes"] - 100 != ms or r["resp_bytes"] != 1000 + ms:
                bad.append(f"port {port}: record {r['req_bytes']}/"
                           f"{r['resp_bytes']} bytes for a {ms} ms request")
            if r["latency_ns"] < ns:
                bad.append(f"port {port}: client latency {r['latency_ns']}"
                           f" ns < the server's own {ns} ns")
    return sum(len(v) for v in got.values()), bad


def first_calls(path, late_bytes):
    """The first call on each connection older than kmond (its first
    record asks late_bytes), by (client port, req_seq)."""
    first = {}
    for r in records(path, "client"):
        if r["lport"] not in first or r["ts"] < first[r["lport"]]["ts"]:
            first[r["lport"]] = r
    return {(p, r["req_seq"]) for p, r in first.items()
            if r["req_bytes"] == late_bytes}


def join(client_path, server_path, late_bytes=None):
    bad = []
    servers = collections.defaultdict(list)
    for r in records(server_path, "server"):
        servers[(r["rport"], r["req_seq"], r["resp_seq"])].append(r)
    pairs = 0
    joined = set()
    late = first_calls(client_path, late_bytes)
    for c in records(client_path, "client"):
        key = (c["lport"], c["req_seq"], c["resp_seq"])
        match = servers.get(key, [])
        if len(match) != 1:
            bad.append(f"client record joins {len(match)} server records: "
                       f"{json.dumps(c)}")
            continue
        s = match[0]
        joined.add(key)
        pairs += 1
        if (c["req_bytes"], c["resp_bytes"]) != (s["req_bytes"],
                                                 s["resp_bytes"]):
            bad.append(f"bytes differ: client {c['req_bytes']}/"
                       f"{c['resp_bytes']}, server {s['req_bytes']}/"
                       f"{s['resp_bytes']}")
        if c["latency_ns"] < s["latency_ns"] and \
                (c["lport"], c["req_seq"]) not in late:
            bad.append(f"client latency {c['latency_ns']} ns < server "
                       f"latency {s['latency_ns']} ns (port {key[0]})")
    for key, rs in servers.items():
        if key not in joined:
            bad.extend(f"server record joins no client record: "
                       f"{json.dumps(r)}" for r in rs)
    return pairs, bad


def main():
    args = sys.argv[1:]
    if len(args) == 6 and args[0] == "client" and args[2] == "--port" and \
            args[4] == "--log":
        n, bad = check_client(args[1], int(args[3]), args[5])
    elif len(args) == 3 and args[0] == "join":
        n, bad = join(args[1], args[2])
    elif len(args) == 5 and args[0] == "join" and args[3] == "--late-bytes":
        n, bad = join(args[1], args[2], int(args[4]))
    else:
        sys.exit(__doc__)
    for b in bad[:20]:
        print(b, file=sys.stderr)
    if len(bad) > 20:
        print(f"... and {len(bad) - 20} more", file=sys.stderr)
    print(n)
    sys.exit(1 if bad else 0)


main()
