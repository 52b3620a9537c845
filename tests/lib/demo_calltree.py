#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""kmon-trace's traces against the demo shop's own call tree.

Each tier of the shop writes a span for every request it served and for
every call it made to a data store (demo/app/shop.py: the application's
ids, its parent's id from the X-Demo-Parent header, the caller's address
and port, its times; nginx writes its own in its access log). That tree
is the ground truth. kmond knows nothing of those ids: a span of the
shop is joined to the kmon-trace server span of the same service, from
the same client address and port (one connection) whose time overlaps
its own: on one connection the shop's spans follow each other, and so do
kmond's, and each of kmond's lies within the shop's of the same request
but for its start on the server side (the first bytes read, before the
handler starts) and a clock's jitter. So the pair of a span is the one
it overlaps, whatever the time a thread waits for Python's lock between
its clock and its socket (100 ms and more on a loaded machine).

A link is "this request was made while serving that one". kmon-trace
links a server span to the client span that sent it, and a client span
to the server request it was made for: the server span two steps up is
the request's parent in kmond's eyes. For the user requests whose path
starts with PREFIX (checkouts):
- recall: of the shop's links, those kmon-trace has (the child joined
  and its parent in kmond's eyes the shop's parent, joined);
- precision: of the parents kmon-trace gives the joined requests, those
  that are the shop's (a parent given to the gateway's request, whose
  caller, the load generator, is not watched, is wrong).

  demo_calltree.py DIR [PREFIX]   (DIR: what demo/run.sh wrote)"""
import json
import os
import sys
from collections import defaultdict

# a shop span and kmond's of the same request overlap by more than this
# (less than 0: the clocks' jitter)
OVERLAP_NS = -200_000


def attrs(obj):
    return {a["key"]: next(iter(a["value"].values())) for a in obj.get("attributes", [])}


def kmon_spans(path):
    """Every span of kmon-trace's OTLP: id -> span."""
    spans = {}
    for line in open(path):
        for rs in json.loads(line)["resourceSpans"]:
            service = attrs(rs["resource"]).get("service.name")
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    a = attrs(s)
                    spans[s["spanId"]] = {
                        "id": s["spanId"], "parent": s.get("parentSpanId"), "service": service,
                        "server": s["kind"] == 2, "start": int(s["startTimeUnixNano"]),
                        "end": int(s["endTimeUnixNano"]),
                        "client": f"{a.get('network.peer.address')}:{a.get('network.peer.port')}"}
    return spans


def shop_spans(path):
    """The shop's spans: id -> span, with its start and end in ns (nginx
    writes its end and duration)."""
    spans = {}
    for line in open(path):
        s = json.loads(line)
        s["end_ns"] = int(float(s["end"]) * 1e9)
        s["start_ns"] = int(float(s["start"]) * 1e9) if "start" in s else \
            s["end_ns"] - int(float(s["duration"]) * 1e9)
        spans[s["span"]] = s
    return spans


def join(shop, kmon):
    """shop span id -> kmon server span id, each kmon span taken once."""
    by_conn = defaultdict(list)
    for k in kmon.values():
        if k["server"]:
            by_conn[(k["service"], k["client"])].append(k)
    pairs = []
    for s in shop.values():
        for k in by_conn.get((s["tier"], s["peer"]), []):
            overlap = min(k["end"], s["end_ns"]) - max(k["start"], s["start_ns"])
            if overlap > OVERLAP_NS:
                pairs.append((overlap, s["span"], k["id"]))
    joined, taken = {}, set()
    for overlap, sid, kid in sorted(pairs, reverse=True):
        if sid not in joined and kid not in taken:
            joined[sid] = kid
            taken.add(kid)
    return joined


def kmon_parent(kmon, kid):
    """The server span whose request made this one's call, or None."""
    call = kmon.get(kmon[kid]["parent"])
    if call is None or call["server"]:
        return call and call["id"]
    up = kmon.get(call["parent"])
    return up["id"] if up else None


def compare(d, prefix="/checkout"):
    requests = [json.loads(line) for line in open(os.path.join(d, "requests.jsonl"))]
    roots = {r["trace"] for r in requests if r["path"].startswith(prefix)}
    shop = shop_spans(os.path.join(d, "logs", "spans.jsonl"))
    kmon = kmon_spans(os.path.join(d, "traces.otlp"))
    joined = join(shop, kmon)

    def given(s):  # the parent kmon-trace gives the shop span S, or None
        return s["span"] in joined and kmon_parent(kmon, joined[s["span"]])

    def found(s):  # S's link to its parent is kmon-trace's
        return bool(given(s)) and given(s) == joined.get(s["parent"])

    ours = [s for s in shop.values() if s["trace"] in roots]
    links = [s for s in ours if s["parent"] in shop]
    below = [s for s in links if shop[s["parent"]]["tier"] != "gateway"]
    claimed = [s for s in ours if given(s)]
    trees = defaultdict(list)  # trace -> its links found or not
    missed = defaultdict(int)
    for s in links:
        trees[s["trace"]].append(found(s))
        if not found(s):
            missed[f"{shop[s['parent']]['tier']} -> {s['tier']}"] += 1
    share = lambda part, whole: part / len(whole) if whole else 0.0
    right = sum(map(found, links))
    right_below = sum(map(found, below))
    right_claimed = sum(map(found, claimed))
    return {
        "user_requests": len(roots), "shop_spans": len(ours),
        "joined": sum(1 for s in ours if s["span"] in joined),
        "links": len(links), "links_found": right, "recall": share(right, links),
        "links_below": len(below), "links_below_found": right_below,
        "recall_below_gateway": share(right_below, below),
        "claimed": len(claimed), "claimed_right": right_claimed,
        "precision": share(right_claimed, claimed),
        "trees": len(trees), "trees_whole": sum(1 for t in trees.values() if all(t)),
        "missed_by_edge": dict(sorted(missed.items(), key=lambda kv: -kv[1])),
    }


if __name__ == "__main__":
    print(json.dumps(compare(*sys.argv[1:]), indent=1))
