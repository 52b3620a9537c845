#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Scores kmond's parent links against the ground truth the trace accuracy
# harness's application logs (tests/lib/trace_app.py).
#
#   trace_accuracy.py score TRUTH_DIR RECORDS [--json OUT]
#                     [--target SVC[@CONC]=PRECISION[,RECALL]]...
#   (SVC@CONC: that service's rows at that concurrency, before SVC's)
#   trace_accuracy.py synth TRUTH_DIR OUT [--wrong N] [--drop N] [--seed S]
#   trace_accuracy.py shape TRUTH_DIR OTLP --monitored SVC,... [--root SVC]
#
# The ground truth is a set of exchanges (one request and its response on
# one connection), each known by the service that served it and the
# request id carried in its payload: its connection (client and server
# port), a time window from the end that logged it, the service that
# called it and the exchange that caller was serving (its true parent).
# A kmond tcp record is mapped to the exchange on its connection whose
# window overlaps it most (calls on one connection never overlap); a
# client-side record by its caller's service, a server-side one by the
# server's. A link kmond made (a client record with `parent`) is correct
# when the server record its parent names maps to the true parent of the
# call's exchange; a link from a record that maps to no exchange, or to
# an id no server record has, is wrong.
#   precision = correct links / links made
#   recall    = correct links / calls that have a true parent
# per run (variant and concurrency) and calling service; `unlinked`:
# calls with a true parent that kmond left without one; `missing`: calls
# with no kmond record at all. Records that end before the first run are
# the set-up's (PostgreSQL handshakes) and are left out.
#
# `synth` writes the tcp records a perfect kmond would write for the
# ground truth (ids, parents), with N links made wrong or dropped: the
# scorer's own check (perfect -> 1.0; one wrong parent -> precision < 1).
#
# `shape` checks kmon-trace's OTLP JSON: as many traces as the root
# service made calls, each with the spans, kinds, services and nesting
# the ground truth gives (a CLIENT span per call of a monitored caller,
# the SERVER span of a monitored server under it, its calls under that).
import argparse
import collections
import glob
import json
import os
import random
import sys

SLACK_NS = 1_000_000  # a record this close to a window may still be it


class Truth:
    def __init__(self, tdir):
        evs = []
        for path in sorted(glob.glob(os.path.join(tdir, "*.json"))):
            evs += [json.loads(line) for line in open(path) if line.strip()]
        self.runs = {e["run"]: e for e in evs if e["ev"] == "run"}
        if not self.runs:
            sys.exit(f"{tdir}: no run in the ground truth")
        self.start = min(r["t0"] for r in self.runs.values())
        self.ex = {}
        for e in (e for e in evs if e["ev"] == "call"):
            self.ex[(e["to"], e["rid"])] = dict(
                caller=e["svc"], cport=e["cport"], sport=e["sport"], t0=e["t0"],
                t1=e["t1"], parent=(e["svc"], e["parent"]) if e["parent"] else None)
        bad = []
        for e in (e for e in evs if e["ev"] == "req"):
            key = (e["svc"], e["rid"])
            x = self.ex.get(key)
            if x is None and e.get("via"):  # called by a proxy that logs nothing
                self.ex[key] = dict(caller=e["via"], cport=e["cport"], sport=e["sport"],
                                    t0=e["t0"], t1=e["t1"], parent=(e["via"], e["rid"]))
            elif x is None:
                bad.append(f"{key}: a request nobody called")
            elif (x["cport"], x["sport"]) != (e["cport"], e["sport"]):
                bad.append(f"{key}: the caller says ports {x['cport']}->{x['sport']}, "
                           f"the server {e['cport']}->{e['sport']}")
        for key, x in self.ex.items():
            x["key"] = key
            x["run"] = key[1].split(":")[0]
            if x["parent"] and x["parent"] not in self.ex:
                bad.append(f"{key}: its parent {x['parent']} is no exchange")
        if bad:
            sys.exit("ground truth inconsistent:\n  " + "\n  ".join(bad[:10]))
        self.conns = collections.defaultdict(list)
        for x in self.ex.values():
            self.conns[(x["cport"], x["sport"])].append(x)

    def find(self, cport, sport, t0, t1, svc, side):
        """The exchange a record describes, or None."""
        best, best_ov = None, -SLACK_NS
        for x in self.conns.get((cport, sport), ()):
            if (x["caller"] if side == "client" else x["key"][0]) != svc:
                continue
            ov = min(t1, x["t1"]) - max(t0, x["t0"])
            if ov > best_ov:
                best, best_ov = x, ov
        return best

    def run_at(self, ts):
        for name, r in self.runs.items():
            if r["t0"] <= ts <= r["t1"] + SLACK_NS:
                return name
        return None


def tcp_records(path):
    recs, stats = [], []
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("kind") == "tcp":
            recs.append(r)
        elif r.get("kind") == "stats":
            stats.append(r)
    return recs, stats


def score(truth, recs):
    """Per (run, calling service): the counts of the docstring."""
    rows = collections.defaultdict(collections.Counter)
    mapped, by_id, seen = {}, {}, set()
    for r in recs:
        t1, svc = r["ts"], r.get("service")
        t0 = t1 - r["latency_ns"]
        if t1 < truth.start or svc is None:
            continue
        if r["side"] == "server":
            cport, sport = r["rport"], r["lport"]
        else:
            cport, sport = r["lport"], r["rport"]
        x = truth.find(cport, sport, t0, t1, svc, r["side"])
        if x is not None and (r["side"], x["key"]) in seen:
            rows[(x["run"], svc)]["duplicate"] += 1
            x = None
        if x is not None:
            seen.add((r["side"], x["key"]))
        if r.get("id"):
            by_id[r["id"]] = (r, x)
        mapped[id(r)] = x
    for r in recs:
        if r["side"] != "client" or id(r) not in mapped:
            continue
        x, svc = mapped[id(r)], r["service"]
        run = x["run"] if x else truth.run_at(r["ts"])
        row = rows[(run, svc)]
        if x is None:
            row["stray"] += 1
        if r.get("parent"):
            row["links"] += 1
            row["link:" + str(r.get("link"))] += 1
            p = by_id.get(r["parent"])
            if x and p and p[0]["side"] == "server" and p[1] and \
                    x["parent"] == p[1]["key"]:
                row["correct"] += 1
        elif x and x["parent"]:
            row["unlinked"] += 1
    callers = {r["service"] for r in recs if r["side"] == "client" and r.get("service")}
    for x in truth.ex.values():
        if x["caller"] not in callers:
            continue  # a caller kmond does not watch (none, unless it saw nothing)
        row = rows[(x["run"], x["caller"])]
        if x["parent"]:
            row["calls"] += 1
        else:
            row["roots"] += 1
        if ("client", x["key"]) not in seen:
            row["missing"] += 1
    return rows


def ratio(a, b):
    return a / b if b else None


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def cmd_score(a):
    truth = Truth(a.truth)
    recs, stats = tcp_records(a.records)
    rows = score(truth, recs)
    unl, lost = collections.Counter(), {}
    if stats:  # counts since kmond started
        lost = dict(stats[-1].get("lost") or {})
        lost["tcp"] = stats[-1].get("collectors", {}).get("tcp", {}).get("lost", 0)
        lost["provider"] = stats[-1].get("provider", {}).get("lost", 0)
    for s in stats:
        tcp = s.get("collectors", {}).get("tcp", {})
        for svc, c in (tcp.get("calls") or {}).items():
            unl[svc] += c.get("unlinked", 0)
    targets = {}
    for t in a.target:
        svc, _, v = t.partition("=")
        p, _, rc = v.partition(",")
        targets[svc] = (float(p), float(rc) if rc else None)
    out, failed = [], []
    order = sorted(rows, key=lambda k: (truth.runs[k[0]]["variant"] if k[0] in truth.runs
                                        else "~", truth.runs.get(k[0], {}).get("conc", 0), k[1]))
    print(f"{'variant':<8} {'conc':>4} {'caller':<15} {'calls':>6} {'roots':>5} {'links':>6} {'right':>6} "
          f"{'precision':>9} {'recall':>7} {'unlinked':>8} {'missing':>7} {'stray':>5}  link")
    for run, svc in order:
        c = rows[(run, svc)]
        info = truth.runs.get(run, {"variant": run or "?", "conc": 0})
        prec, rec = ratio(c["correct"], c["links"]), ratio(c["correct"], c["calls"])
        row = dict(run=run, variant=info["variant"], conc=info["conc"], caller=svc,
                   calls=c["calls"], roots=c["roots"], links=c["links"], correct=c["correct"],
                   precision=prec, recall=rec, unlinked=c["unlinked"], missing=c["missing"],
                   stray=c["stray"], duplicate=c["duplicate"],
                   kinds={k[5:]: n for k, n in c.items() if k.startswith("link:")})
        out.append(row)
        print(f"{info['variant']:<8} {info['conc']:>4} {svc:<15} {c['calls']:>6} {c['roots']:>5} {c['links']:>6} "
              f"{c['correct']:>6} {fmt(prec):>9} {fmt(rec):>7} {c['unlinked']:>8} "
              f"{c['missing']:>7} {c['stray']:>5}  "
              + " ".join(f"{k}:{n}" for k, n in sorted(row["kinds"].items())))
        target = targets.get(f"{svc}@{info['conc']}", targets.get(svc))
        if target:
            pmin, rmin = target
            if prec is not None and prec < pmin:
                failed.append(f"{run} {svc}: precision {prec:.3f} < {pmin}")
            if rmin is not None and (rec or 0) < rmin:
                failed.append(f"{run} {svc}: recall {fmt(rec)} < {rmin}")
    if unl:  # kmond's own count, set-up included
        print("unlinked calls in kmond's stats: " +
              ", ".join(f"{s} {n}" for s, n in sorted(unl.items()) if n))
    if any(lost.values()):  # records kmond lost: the links they held are missing
        print("lost in kmond's stats (kernel = tcp + provider + ...): " +
              ", ".join(f"{k} {n}" for k, n in sorted(lost.items())))
        # which of tcp's counts: missed runs (a program the kernel skipped
        # on a CPU where it already ran), the ring, full maps
        tcp = stats[-1].get("collectors", {}).get("tcp", {})
        print("tcp's stats: " + ", ".join(f"{k} {v}" for k, v in sorted(tcp.items())
                                          if isinstance(v, (int, float)) and v))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": out, "stats_unlinked": unl}, f)
    for svc in targets:
        if not any(k[1] == svc.partition("@")[0] for k in rows):
            failed.append(f"{svc}: no calls scored")
    if failed:
        sys.exit("below target:\n  " + "\n  ".join(failed))


def cmd_synth(a):
    """The records a perfect kmond would write, then N links spoilt."""
    truth = Truth(a.truth)
    rng = random.Random(a.seed)
    ids = {key: f"{i + 1:016x}" for i, key in enumerate(sorted(truth.ex))}
    recs = []
    for key, x in sorted(truth.ex.items()):
        base = dict(kind="tcp", latency_ns=x["t1"] - x["t0"], ts=x["t1"])
        recs.append(dict(base, side="server", service=key[0], lport=x["sport"],
                         rport=x["cport"], id=ids[key]))
        c = dict(base, side="client", service=x["caller"], lport=x["cport"],
                 rport=x["sport"], id="c" + ids[key][1:])
        if x["parent"]:
            c["parent"], c["link"] = ids[x["parent"]], "thread"
        recs.append(c)
    linked = [r for r in recs if r.get("parent")]
    servers = [r["id"] for r in recs if r["side"] == "server"]
    spoilt = rng.sample(linked, a.wrong + a.drop)
    for r in spoilt[:a.wrong]:
        r["parent"] = rng.choice([s for s in servers if s != r["parent"]])
    for r in spoilt[a.wrong:]:
        del r["parent"]
    with open(a.out, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def cmd_shape(a):
    """kmon-trace's OTLP JSON: one trace per front request, each of the
    shape the ground truth gives (spans, their kinds, services, nesting)."""
    truth = Truth(a.truth)
    monitored = set(a.monitored.split(","))
    kids = collections.defaultdict(list)
    for key, x in truth.ex.items():
        if x["parent"]:
            kids[x["parent"]].append(key)

    def truth_sig(key):  # the client span of exchange KEY and below
        sig = "C:" + truth.ex[key]["caller"]
        if key[0] in monitored:
            below = sorted(truth_sig(k) for k in kids[key])
            sig += "[S:" + key[0] + (f"[{','.join(below)}]" if below else "") + "]"
        return sig

    traces = collections.defaultdict(list)
    for line in open(a.otlp):
        for rs in json.loads(line)["resourceSpans"]:
            svc = otlp_attrs(rs["resource"]["attributes"])["service.name"]
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    sp["service"], sp["attrs"] = svc, otlp_attrs(sp.get("attributes", []))
                    traces[sp["traceId"]].append(sp)
    roots = [x for x in truth.ex.values() if x["caller"] == a.root]
    bad, done, setup = [], set(), 0
    for tid, spans in traces.items():
        if max(int(sp["endTimeUnixNano"]) for sp in spans) < truth.start:
            setup += 1  # the set-up's (GET /warm and its handshakes)
            continue
        below = collections.defaultdict(list)
        for sp in spans:
            below[sp.get("parentSpanId") or None].append(sp)

        def span_sig(sp):
            k = sorted(span_sig(c) for c in below[sp["spanId"]])
            return ("C:" if sp["kind"] == 3 else "S:") + sp["service"] + \
                (f"[{','.join(k)}]" if k else "")
        top = below[None]
        if len(top) != 1 or top[0]["service"] != a.root or top[0]["kind"] != 3:
            bad.append(f"trace {tid}: roots {[(s['service'], s['kind']) for s in top]}")
            continue
        r = top[0]
        x = truth.find(int(r["attrs"]["network.local.port"]),
                       int(r["attrs"]["network.peer.port"]), int(r["startTimeUnixNano"]),
                       int(r["endTimeUnixNano"]), a.root, "client")
        if x is None or x["key"] in done:
            bad.append(f"trace {tid}: its root is no front request, or one seen twice")
            continue
        done.add(x["key"])
        want, got = truth_sig(x["key"]), span_sig(r)
        if want != got:
            bad.append(f"trace of {x['key'][1]}: {got}, want {want}")
    n = len(traces) - setup
    print(f"{n} traces for {len(roots)} front requests ({setup} of the set-up "
          f"left out), {n - len(bad)} of the right shape")
    if n != len(roots) or bad:
        sys.exit("traces:\n  " + "\n  ".join(bad[:10]))


def otlp_attrs(lst):
    return {a["key"]: next(iter(a["value"].values())) for a in lst}


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score")
    s.add_argument("truth")
    s.add_argument("records")
    s.add_argument("--json")
    s.add_argument("--target", action="append", default=[])
    s = sub.add_parser("synth")
    s.add_argument("truth")
    s.add_argument("out")
    s.add_argument("--wrong", type=int, default=0)
    s.add_argument("--drop", type=int, default=0)
    s.add_argument("--seed", type=int, default=1)
    s = sub.add_parser("shape")
    s.add_argument("truth")
    s.add_argument("otlp")
    s.add_argument("--monitored", required=True, help="SVC,SVC...")
    s.add_argument("--root", default="load", help="the service whose calls start traces")
    a = p.parse_args()
    {"score": cmd_score, "synth": cmd_synth, "shape": cmd_shape}[a.cmd](a)


if __name__ == "__main__":
    main()
