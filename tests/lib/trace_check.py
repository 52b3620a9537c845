# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compares kmon-trace's OTLP JSON with the traces trace_gen.py says the
records make.

  trace_check.py OTLP_FILE EXPECTED_JSON [--stats STATS_LINE_FILE] [--pieces]

Every line must be one whole trace: all its spans share one traceId, no
traceId spans two lines (with --pieces it may: spans that came later than
the quiet time are written as a later piece of the same trace). The traces must be exactly the expected ones:
the same spans, each under the same parent, with its kind, service and
node; all spans of a trace carry the root's trace id, that is the trace
kmond gave the first front request. Each span's outcome must be the
expected one: status ERROR exactly on errors, the status, method, route
and error.type attributes. With --stats, kmon-trace's final
counts must agree too. Prints one line per problem; exits 1 if any."""
import json
import sys

KINDS = {2: "server", 3: "client"}


def attrs(lst):
    out = {}
    for kv in lst or []:
        v = kv["value"]
        out[kv["key"]] = v.get("stringValue", v.get("intValue"))
    return out


STATUS_ATTRS = ("http.response.status_code", "db.response.status_code",
                "kmon.status")


def outcome(sp):
    """A span's outcome as kmon-trace wrote it, in trace_gen.py's terms."""
    a = attrs(sp.get("attributes"))
    out = {"error": sp.get("status", {}).get("code") == 2}
    for k in STATUS_ATTRS:
        if k in a:
            out["status"] = str(a[k])
    for k, name in (("http.request.method", "method"),
                    ("http.route", "route"), ("error.type", "error.type")):
        if k in a:
            out[name] = a[k]
    return out


def main():
    otlp, expected = sys.argv[1], json.load(open(sys.argv[2]))
    problems = []
    got = {}  # trace id -> {span id: parent}
    info = {}
    lines = [l for l in open(otlp).read().splitlines() if l.strip()]
    for n, line in enumerate(lines, 1):
        req = json.loads(line)
        ids = set()
        for rs in req["resourceSpans"]:
            res = attrs(rs["resource"]["attributes"])
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    ids.add(sp["traceId"])
                    got.setdefault(sp["traceId"], {})[sp["spanId"]] = \
                        sp.get("parentSpanId", "")
                    info[sp["spanId"]] = {
                        "kind": KINDS.get(sp["kind"], sp["kind"]),
                        "service": res.get("service.name"),
                        "node": res.get("host.name"),
                        "outcome": outcome(sp)}
        if len(ids) != 1:
            problems.append(f"line {n}: {len(ids)} trace ids in one request")
    if len(lines) != len(got) and "--pieces" not in sys.argv:
        problems.append(f"{len(lines)} lines for {len(got)} trace ids: a "
                        "trace was written in pieces")
    want = {t["root"]: t["spans"] for t in expected["traces"]}
    by_root = {}
    for tid, spans in got.items():
        roots = [s for s, p in spans.items() if p not in spans]
        key = roots[0] if len(roots) == 1 else None
        if key is None:
            problems.append(f"trace {tid}: {len(roots)} roots {roots}")
            continue
        by_root[key] = (tid, spans)
    for root, spans in want.items():
        if root not in by_root:
            problems.append(f"trace of {root}: not written whole "
                            f"({len(spans)} spans expected)")
            continue
        tid, g = by_root[root]
        if g != spans:
            problems.append(f"trace of {root}: spans/parents {g} != {spans}")
    for root in set(by_root) - set(want):
        problems.append(f"unexpected trace rooted at {root}")
    for sid, want_info in expected["spans"].items():
        if sid in info and info[sid] != want_info:
            problems.append(f"span {sid}: {info[sid]} != {want_info}")
    nspans = sum(len(s) for s in got.values())
    if nspans != len(expected["spans"]):
        problems.append(f"{nspans} spans written, "
                        f"{len(expected['spans'])} in the records")
    if "--stats" in sys.argv:
        stats = json.loads(open(sys.argv[sys.argv.index("--stats") + 1])
                           .read().splitlines()[-1])
        for k, v in (("records", expected["records"]),
                     ("spans", expected["records"]),
                     ("rejected", 0),
                     ("joined", expected["exchanges_joined"]),
                     ("unmatched_client", expected["unmatched_client"]),
                     ("unmatched_server", expected["unmatched_server"]),
                     ("traces", len(lines) if "--pieces" in sys.argv
                      else len(want)),
                     ("spans_written", expected["records"]),
                     ("ambiguous", 0), ("evicted", 0)):
            if stats.get(k) != v:
                problems.append(f"stats {k}: {stats.get(k)} != {v}")
    for p in problems:
        print(p)
    print(f"{len(got)} traces, {nspans} spans checked, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
