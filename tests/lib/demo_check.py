#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks what `make demo` wrote (demo/run.sh) against what the shop
knows of itself: its call graph (demo/app: who calls whom, over which
protocol), the load generator's log of every request (the statuses it
got), and the fault it was given.

  demo_check.py DIR --fault-tier TIER --fault-ms MS

- every tier is in kmon-topo's graph, with exactly the shop's edges,
  each with its protocol;
- the errors kmond counted on the failing edges are the failures the
  load generator saw (payment's 503s on checkout -> payment, the 502s
  checkout answers for them on frontend -> checkout), within 1%;
- declined cards (402) on checkout -> payment, by status class;
- the checkout trace reaches at least five services;
- kmon-trace's traces of the checkouts against the shop's own call tree
  (tests/lib/demo_calltree.py): precision and recall of the parent
  links, each above a bound measured on runs of this test;
- the slowed tier is the slowest one checkout calls, and its off-CPU
  records hold the fault's sleep (nanosleep), no other Python tier's;
- the fault's sleep is the dominant part of the slowed tier's off-CPU
  flame graph (its collapsed stacks, as drawn: its threads' waits for
  their next request left out);
- kmond's tcp collector lost nothing."""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
import demo_calltree  # noqa: E402

# the shop's call graph, from demo/app (server side: src -> dst)
EDGES = {
    ("external", "gateway"): "http",
    ("gateway", "frontend"): "http",
    ("frontend", "catalogue"): "http", ("frontend", "ad"): "http",
    ("frontend", "cart"): "http", ("frontend", "currency"): "http",
    ("frontend", "recommendation"): "http", ("frontend", "checkout"): "http",
    ("recommendation", "catalogue"): "http",
    ("catalogue", "memcached"): "memcached", ("catalogue", "postgres"): "postgresql",
    ("cart", "redis"): "redis",
    ("checkout", "cart"): "http", ("checkout", "catalogue"): "http",
    ("checkout", "currency"): "http", ("checkout", "shipping"): "http",
    ("checkout", "payment"): "http", ("checkout", "email"): "http",
    ("checkout", "postgres"): "postgresql",
    ("email", "redis"): "redis",
    ("checkout", "kafka"): "kafka",
}
# Bounds measured first, on three runs of this test (45 s, 99 checkouts,
# about 1670 links each): precision 1.0, 1.0, 1.0; recall 0.961, 0.964,
# 0.958, every miss nginx's gateway -> frontend (its one worker thread
# serves several requests at once), so the recall below the gateway 1.0
# each time. Since nginx's calls are linked by its handler (links
# "connect", "inline": docs/design/paths.md): precision 1.0, recall
# 0.990 (17 gateway -> frontend missed of 99), 82 of the 99 checkouts one
# whole trace; one run before the body's read counted (0.973, 54).
# Later runs read recall 0.986 and 0.987 (23 and 21 missed, all the
# gateway's), 76 and 78 whole. The misses were requests whose call's
# answer had begun while nginx held its own answer back for the answer's
# body (the frontend writes head and body apart): since kmond knows
# that wait (bpf/tcp/body_after.bpf.h), recall 1.0 and 99 of 99 whole
# in two runs, every one of nginx's 777 calls linked. The bounds sit
# below that, above every run before it (0.987, 82 whole).
CALLTREE_PRECISION = 0.99
CALLTREE_RECALL = 0.99
CALLTREE_WHOLE = 0.90
CALLTREE_RECALL_BELOW_GATEWAY = 0.99
# measured: 0.993, 0.978, 0.977 of the time shown (4.5 s of 4.6); of all
# the tier's off-CPU time, with its waits for work, 0.036, 0.035, 0.035
FAULT_SHARE = 0.9
PYTHON_TIERS = {"frontend", "catalogue", "cart", "checkout", "currency",
                "recommendation", "shipping", "payment", "ad", "email"}
failures = []


def check(what, good, detail=""):
    print(("ok: " if good else "FAIL: ") + what + (f" ({detail})" if detail else ""))
    if not good:
        failures.append(what)


def near(got, want):
    """Within 1% (and one request: the last interval's edge)."""
    return abs(got - want) <= max(1, 0.01 * want)


def fault_share(folded, frame="hrtimer_nanosleep"):
    """The share of a folded file's time in stacks through FRAME (the
    fault's time.sleep), and its seconds in all."""
    total = fault = 0
    for line in open(folded):
        stack, _, ns = line.rpartition(" ")
        total += int(ns)
        fault += int(ns) if frame in stack.split(";") else 0
    return fault / max(1, total), total / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--fault-tier", required=True)
    ap.add_argument("--fault-ms", type=float, required=True)
    a = ap.parse_args()
    d = a.dir
    path = lambda name: os.path.join(d, name)
    for name in ("index.html", "topology.svg", "checkout-trace.svg", "load.svg",
                 f"offcpu-{a.fault_tier}.svg", "summary.json"):
        check(f"{name} written", os.path.exists(path(name)) and os.path.getsize(path(name)) > 0)
    if failures:
        sys.exit("the demo did not write everything")

    graph = json.loads(open(path("topology.json")).read())
    edges = {(e["src"], e["dst"]): e for e in graph["edges"]}
    tiers = {t for edge in EDGES for t in edge}
    seen = {t for edge in edges for t in edge}
    check("every tier in the graph", tiers <= seen, f"missing {sorted(tiers - seen)}")
    check("the shop's edges and no other", set(edges) == set(EDGES),
          f"missing {sorted(set(EDGES) - set(edges))}, extra {sorted(set(edges) - set(EDGES))}")
    wrong = {k: (edges[k].get("protocol"), p) for k, p in EDGES.items()
             if k in edges and edges[k].get("protocol") != p}
    check("each edge's protocol", not wrong, f"got, want: {wrong}")

    reqs = [json.loads(line) for line in open(path("requests.jsonl"))]
    checkouts = [r for r in reqs if r["path"].startswith("/checkout")]
    unavailable = sum(1 for r in checkouts if r["status"] == 502 and "payment failed" in r.get("error", ""))
    declined = sum(1 for r in checkouts if r["status"] == 402)
    failed = sum(1 for r in checkouts if r["status"] >= 500)
    paid = sum(1 for r in checkouts if r["status"] == 200)
    orders = sum(1 for _ in open(path("orders.txt")))
    check("an order event on the broker for each paid checkout", orders == paid,
          f"broker {orders}, generator {paid}")
    bus = edges.get(("checkout", "kafka"), {})
    check("kmond's checkout -> kafka requests are the order events", bus.get("requests") == orders,
          f"kmond {bus.get('requests')}, broker {orders}")
    pay = edges.get(("checkout", "payment"), {})
    check("payment's errors are the generator's unavailable payments",
          unavailable > 0 and near(pay.get("errors", -1), unavailable),
          f"kmond {pay.get('errors')}, generator {unavailable}")
    check("payment's declines as 4xx", declined > 0 and near(pay.get("status_4xx", -1), declined),
          f"kmond {pay.get('status_4xx')}, generator {declined}")
    co = edges.get(("frontend", "checkout"), {})
    check("checkout's errors are the generator's failed checkouts",
          failed > 0 and near(co.get("errors", -1), failed), f"kmond {co.get('errors')}, generator {failed}")
    for edge in (("checkout", "payment"), ("frontend", "checkout"), ("gateway", "frontend"),
                 ("external", "gateway")):
        check(f"error rate on {edge[0]} -> {edge[1]} not 0", edges.get(edge, {}).get("error_rate", 0) > 0,
              str(edges.get(edge, {}).get("error_rate")))

    summary = json.load(open(path("summary.json")))
    services = summary["checkout_trace_services"]
    check("the checkout trace spans at least 5 services", len(services) >= 5, ", ".join(services))
    check("it holds checkout, payment and shipping", {"checkout", "payment", "shipping"} <= set(services))
    # one trace from the user's request down: the gateway's call linked
    check("it begins at the gateway (one trace, not two)", "gateway" in services)

    tree = demo_calltree.compare(d)
    print("call tree of the checkouts: " + json.dumps(tree))
    check("kmon-trace's parent links of the checkouts are the shop's (precision)",
          tree["precision"] >= CALLTREE_PRECISION,
          f"{tree['claimed_right']} of {tree['claimed']}: {tree['precision']:.4f}, "
          f"bound {CALLTREE_PRECISION}")
    check("the shop's links of the checkouts found by kmon-trace (recall)",
          tree["recall"] >= CALLTREE_RECALL,
          f"{tree['links_found']} of {tree['links']}: {tree['recall']:.4f}, bound {CALLTREE_RECALL}")
    below = tree["links"] - tree["links_below"]
    check("below the gateway, the links found (recall)",
          tree["recall_below_gateway"] >= CALLTREE_RECALL_BELOW_GATEWAY,
          f"{tree['links_below_found']} of {tree['links_below']}: {tree['recall_below_gateway']:.4f}, "
          f"bound {CALLTREE_RECALL_BELOW_GATEWAY}; the gateway's {below}")
    check("checkouts whose every link kmon-trace has (one whole trace each)",
          tree["trees_whole"] >= CALLTREE_WHOLE * tree["trees"],
          f"{tree['trees_whole']} of {tree['trees']}, bound {CALLTREE_WHOLE}")
    check("every span of the shop joined to kmond's", tree["joined"] == tree["shop_spans"],
          f"{tree['joined']} of {tree['shop_spans']}")

    shown, seconds = fault_share(path(f"offcpu-{a.fault_tier}.folded"))
    whole, all_seconds = fault_share(path(f"offcpu-{a.fault_tier}-all.folded"))
    check(f"the fault's sleep dominates {a.fault_tier}'s off-CPU flame graph", shown >= FAULT_SHARE,
          f"{shown:.3f} of {seconds:.2f} s shown, bound {FAULT_SHARE}; "
          f"{whole:.3f} of all {all_seconds:.2f} s with the waits for work")

    slow = edges.get(("checkout", a.fault_tier), {})
    p50 = slow.get("latency_p50_ns", 0) / 1e6
    check(f"{a.fault_tier}'s p50 at least its fault", p50 >= a.fault_ms, f"{p50:.1f} ms")
    others = {dst: e["latency_p50_ns"] / 1e6 for (src, dst), e in edges.items()
              if src == "checkout" and dst != a.fault_tier}
    check(f"{a.fault_tier} the slowest tier checkout calls", all(v < p50 for v in others.values()),
          ", ".join(f"{k} {v:.1f} ms" for k, v in sorted(others.items())))

    asleep = {}
    lost, offcpu = None, {}
    for line in open(path("records.json")):
        r = json.loads(line)
        if r["kind"] == "offcpu" and r.get("service") in PYTHON_TIERS and \
                any("nanosleep" in f for f in r["stack"]):
            asleep[r["service"]] = asleep.get(r["service"], 0) + r["total_ns"]
        elif r["kind"] == "stats":
            lost = {name: c["lost"] for name, c in r["collectors"].items()}
            offcpu = r["collectors"].get("offcpu", {})
    served = sum(e["requests"] for (src, dst), e in edges.items() if dst == a.fault_tier)
    want = served * a.fault_ms * 1e6
    got = asleep.pop(a.fault_tier, 0)
    check(f"{a.fault_tier}'s off-CPU time holds its fault", got >= 0.9 * want,
          f"{got / 1e9:.2f} s asleep, {served} requests x {a.fault_ms} ms = {want / 1e9:.2f} s")
    check("no other Python tier sleeps", sum(asleep.values()) < 0.05 * want,
          ", ".join(f"{k} {v / 1e9:.3f} s" for k, v in asleep.items()))
    # the graph's counts are exact only if tcp lost nothing; the others
    # may lose a few on a loaded machine where every process is watched
    # (offcpu's 349 and 439 of 18000 and 19200 were all stacks: user
    # stacks that met in one slot of its stack map, their blocks counted)
    check("tcp lost nothing", lost is not None and lost.get("tcp") == 0, str(lost))
    blocks_lost = offcpu.get("lost", 0) - offcpu.get("stacks_lost", 0) - offcpu.get("missed", 0)
    check("offcpu lost no block (stacks aside)", lost is not None and blocks_lost == 0,
          f"{blocks_lost} blocks, {offcpu.get('stacks_lost')} stacks of {offcpu.get('events')}")
    if failures:
        sys.exit(f"{len(failures)} checks failed")


if __name__ == "__main__":
    main()
