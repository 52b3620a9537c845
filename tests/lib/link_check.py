#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks the request paths in kmond's records against the ground truth
tests/lib/link_svc.py logged.

link_check.py OUT.json MID.log --mid-port P --back-port Q --service NAME
              --expect linked|unlinked|right [--link LINK[,LINK...]]

Every tcp record has a well-formed id (16 lowercase hex digits), unique,
and trace (32); parent and link come together. Each request the middle
service logged has its server record (the K-th one from FRONT_PORT, by
time), each call its client record (by local port). A linked call is
right when its parent is its request's id and its trace that request's
trace; an unlinked one has a trace of its own. --expect linked: every
call is linked right, by --link (default thread; a list: any of them); unlinked: no call is
linked; right: those linked are (any number of them). The stats records'
collectors.tcp.calls.NAME count exactly the linked and unlinked calls.
Prints the precision and recall of the parent links."""
import argparse
import collections
import json
import re
import sys

ID = re.compile(r"^[0-9a-f]{16}$")
TRACE = re.compile(r"^[0-9a-f]{32}$")


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("log")
    ap.add_argument("--mid-port", type=int, required=True)
    ap.add_argument("--back-port", type=int, required=True)
    ap.add_argument("--service", required=True)
    ap.add_argument("--expect", choices=["linked", "unlinked", "right"],
                    required=True)
    ap.add_argument("--link", default="thread")
    a = ap.parse_args()

    recs = [json.loads(l) for l in open(a.out)]
    tcp = [r for r in recs if r["kind"] == "tcp"]
    ids = collections.Counter()
    for r in tcp:
        if not ID.match(r.get("id", "")):
            fail(f"id not 16 hex digits: {r}")
        if not TRACE.match(r.get("trace", "")):
            fail(f"trace not 32 hex digits: {r}")
        if ("parent" in r) != ("link" in r):
            fail(f"parent and link do not come together: {r}")
        if "parent" in r and (r["side"] != "client" or
                              not ID.match(r["parent"])):
            fail(f"bad parent: {r}")
        ids[r["id"]] += 1
    dup = [i for i, n in ids.items() if n > 1]
    if dup:
        fail(f"ids not unique: {dup[:5]}")

    # Ground truth.
    reqs, calls = [], []
    for line in open(a.log):
        f = line.split()
        if f[0] == "REQ":
            reqs.append((int(f[1]), int(f[2])))
        else:
            calls.append(((int(f[1]), int(f[2])), int(f[3])))

    by_front = collections.defaultdict(list)
    for r in tcp:
        if r["side"] == "server" and r["lport"] == a.mid_port:
            by_front[r["rport"]].append(r)
    server = {}
    for port, rs in by_front.items():
        rs.sort(key=lambda r: r["ts"])
        for k, r in enumerate(rs):
            server[(port, k)] = r
    if sorted(server) != sorted(reqs):
        fail(f"{len(server)} server records of the middle service for "
             f"{len(reqs)} requests logged")

    by_lport = collections.defaultdict(list)
    for r in tcp:
        if r["side"] == "client" and r["rport"] == a.back_port:
            by_lport[r["lport"]].append(r)
    want = collections.defaultdict(list)
    for tag, lport in calls:
        want[lport].append(tag)
    linked = right = unlinked = 0
    traces = collections.Counter(r["trace"] for r in tcp)
    for lport, tags in want.items():
        got = by_lport.get(lport, [])
        if len(got) != len(tags) or len(set(tags)) != 1:
            fail(f"port {lport}: {len(got)} call records for calls {tags}")
        parent = server[tags[0]]
        for r in got:
            if "parent" not in r:
                unlinked += 1
                if traces[r["trace"]] != 1:
                    fail(f"an unlinked call shares its trace: {r}")
                continue
            linked += 1
            if r["link"] not in a.link.split(","):
                fail(f"link {r['link']}: {r}")
            if r["parent"] == parent["id"] and r["trace"] == parent["trace"]:
                right += 1
            else:
                print(f"wrong parent: {r} for {parent}", file=sys.stderr)
    n = len(calls)
    if sum(len(v) for v in by_lport.values()) != n:
        fail(f"{sum(len(v) for v in by_lport.values())} call records "
             f"for {n} calls")

    # The stats records count the same calls.
    st = collections.Counter()
    for r in recs:
        if r["kind"] != "stats":
            continue
        tcps = r["collectors"]["tcp"]
        c = tcps.get("calls", {}).get(a.service, {})
        st["linked"] += c.get("linked", 0)
        st["unlinked"] += c.get("unlinked", 0)
        st["all_linked"] += tcps.get("linked", 0)
        st["all_unlinked"] += tcps.get("unlinked", 0)
    if (st["linked"], st["unlinked"]) != (linked, unlinked):
        fail(f"stats count {st['linked']} linked, {st['unlinked']} "
             f"unlinked calls of {a.service}; records {linked}, {unlinked}")
    if st["all_linked"] < st["linked"] or st["all_unlinked"] < st["unlinked"]:
        fail(f"stats totals below the service's: {dict(st)}")

    precision = right / linked if linked else 1.0
    recall = right / n if n else 1.0
    print(f"calls {n} linked {linked} right {right} unlinked {unlinked} "
          f"precision {precision:.3f} recall {recall:.3f}")
    if right != linked:
        fail(f"{linked - right} calls linked to the wrong request")
    if a.expect == "linked" and right != n:
        fail(f"{n - right} of {n} calls not linked")
    if a.expect == "unlinked" and linked:
        fail(f"{linked} calls linked while several requests were in flight")


if __name__ == "__main__":
    main()
