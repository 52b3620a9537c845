#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Scores kmon-trace's traces of a simulated fleet (bench/fleet_gen.c)
against its ground truth.

  fleet_score.py TRUTH OTLP...

Parent links across nodes: a server span's parent is its caller's client
span. precision = right links / links written; recall = right links /
links that could be made (both ends reached Kafka). Trace ids: a span's
trace must be that of the topmost request it descends from through links
that could be made. Every span written exactly once. Prints one JSON line."""
import json
import sys


def main():
    truth = {}  # id -> (parent, trace, side, produced)
    with open(sys.argv[1]) as f:
        for line in f:
            sid, parent, trace, side, produced = line.split()
            truth[sid] = (parent, trace, side, produced == "1")
    # a local trace under the trace of its root's caller, when linkable
    up = {}
    for sid, (parent, trace, side, produced) in truth.items():
        if side == "server" and produced and parent != "0" * 16:
            p = truth.get(parent)
            if p and p[3]:
                up[trace] = p[1]

    def final(trace):
        seen = 0
        while trace in up and seen < 64:
            trace = up[trace]
            seen += 1
        return trace

    written = {}
    dup = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            for line in f:
                for rs in json.loads(line)["resourceSpans"]:
                    for ss in rs["scopeSpans"]:
                        for sp in ss["spans"]:
                            if sp["spanId"] in written:
                                dup += 1
                            written[sp["spanId"]] = (sp.get("parentSpanId", ""),
                                                     sp["traceId"], sp["kind"])
    made = right = could = 0
    trace_ok = spans = missing = extra = 0
    for sid, (parent, trace, side, produced) in truth.items():
        if not produced:
            if sid in written:
                extra += 1
            continue
        spans += 1
        w = written.get(sid)
        if w is None:
            missing += 1
            continue
        trace_ok += w[1] == final(trace)
        if side != "server":
            continue
        p = truth.get(parent)
        linkable = parent != "0" * 16 and p is not None and p[3]
        could += linkable
        if w[0]:
            made += 1
            right += linkable and w[0] == parent
    print(json.dumps({
        "spans": spans, "written": len(written), "missing": missing,
        "extra": extra, "duplicates": dup,
        "links_possible": could, "links_made": made, "links_right": right,
        "precision": round(right / made, 6) if made else None,
        "recall": round(right / could, 6) if could else None,
        "trace_ids_right": round(trace_ok / spans, 6) if spans else None}))


main()
