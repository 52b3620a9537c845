#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Queries kmond's JSON-lines output for the integration tests.

records.py FILE [--kind K] [--where key=value ...] (--count | --sum FIELD |
            --values FIELD | --check)
Every line must be a JSON object with kind, ts and node (--check verifies
only that); --where compares the field's JSON value rendered as a string
("null" for null). A FIELD of --values may be a path into nested objects
(collectors.tcp.lost) when no field has that whole name."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--kind")
    ap.add_argument("--where", action="append", default=[])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--count", action="store_true")
    g.add_argument("--sum")
    g.add_argument("--values")
    g.add_argument("--check", action="store_true")
    a = ap.parse_args()

    conds = [w.split("=", 1) for w in a.where]
    selected = []
    with open(a.file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                rec = json.loads(line)
            except ValueError as e:
                sys.exit(f"{a.file}:{n}: not JSON: {e}")
            for key in ("kind", "ts", "node"):
                if key not in rec:
                    sys.exit(f"{a.file}:{n}: no '{key}'")
            if a.kind and rec["kind"] != a.kind:
                continue
            if all(render(rec.get(k)) == v for k, v in conds):
                selected.append(rec)
    if a.count:
        print(len(selected))
    elif a.sum:
        print(sum(r[a.sum] for r in selected))
    elif a.values:
        for r in selected:
            print(render(field(r, a.values)))


def field(rec, path):
    """rec's field path: its own name, else a dotted path (None if absent)."""
    if path in rec:
        return rec[path]
    for name in path.split("."):
        if not isinstance(rec, dict):
            return None
        rec = rec.get(name)
    return rec


def render(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


main()
