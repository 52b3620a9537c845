#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Whether several kmon-trace outputs (OTLP JSON lines, one member's
each) make the same traces as another (one member's): the same set of
(traceId, spanId, parentSpanId), every span written once.

  trace_same.py ONE_OTLP MEMBER_OTLP... prints the spans compared;
  exits 1 with the differences."""
import collections
import json
import sys


def spans(paths):
    got = collections.Counter()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                for rs in json.loads(line)["resourceSpans"]:
                    for ss in rs["scopeSpans"]:
                        for sp in ss["spans"]:
                            got[(sp["traceId"], sp["spanId"],
                                 sp.get("parentSpanId", ""))] += 1
    return got


def main():
    one, members = spans(sys.argv[1:2]), spans(sys.argv[2:])
    problems = [f"written {n} times: {k}" for k, n in members.items() if n > 1]
    problems += [f"only from one member: {k}" for k in one - members]
    problems += [f"only from the group: {k}" for k in members - one]
    for p in problems[:20]:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(f"{len(problems)} differences")
    print(sum(one.values()))


main()
