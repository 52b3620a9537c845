#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The occupancy evaluation on real processes (issue 17): two-tier
tandems (tests/helpers/tandem.c) at chosen utilizations, kmond on the
front of each and on its callers, and kmond's `occupancy` estimates
against the truth.

tandem_eval.py --kmond K --tandem T --work DIR --port BASE
               (--combos "R1,R2 R1,R2 ..." | --grid) [--batch 9]
               [--rate 100] [--interval 10] [--samples 2] [--seed 1]
               [--kmond-prio 20]
               [--client-side] [--window S] [--max-mae X] [--max-mae-low X]
               [--max-dist X] [--max-busy-err X] [--max-clock-err X]
               [--max-refused FRACTION] [--require-sequence]
               [--max-overhead X]

Each combination runs as tier 1 (port BASE+2i, service front-i) and tier
2 (BASE+2i+1, back-i) with mean service times rho/rate, fed by a Poisson
client at `rate`; up to --batch combinations run at once under one kmond
whose interval (seconds) is one sample: each interval's `occupancy`
record of front-i is one estimate (the first interval, a warm-up, and
partial ones are left out). --client-side: the clients run as service
`callers` (comm tandem-caller) and each front's endpoint is a target
too, seen from its callers: its estimates get a table of their own.
--kmond-prio: kmond's SCHED_FIFO priority (the tiers run at 10).
--window: the fronts' targets over windows of S seconds too (reported
apart: with --require-sequence each must be refined by the sequence,
as every interval's fit, unless kmond counted steps lost).

Truth: the configured utilizations (sorted pairs, as the published work
compares them); also shown, the utilization each sample realized, from
each tier's own spans of service (DIR/samples.jsonl has them all).
Checks of the measured load: back-i's `busy` in each interval against
the time tier 2 held a request by its own clock and its realized
utilization (--max-busy-err); each tier's own clock over the whole run
against its configured utilization (--max-clock-err: on average, and
each beyond 4 sd of its run's own chance, rho sqrt(2 / N) for N
requests: one interval's realized utilization strays by that chance). Prints the tables by range of rho (like the published Table II)
and kmond's estimator CPU per interval; exits 1 when a --max-* bound is
passed. --max-mae bounds both layers, --max-mae-low the lower one apart.
--max-overhead: the premise, that a tier serves whenever it holds a
request (single-server FIFO); where tier 2 held requests without serving
them for more than X of an interval (a machine as slow as a qemu guest
without KVM), the tandems are not the queues the estimator models: the
estimates' bounds (--max-mae, --max-mae-low, --max-dist, --max-refused)
are not judged, nor busy against the realized utilization, and it says
so; busy against the time tier 2 held requests, and the sequence, still
are."""
import argparse
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time


TANDEM_TIER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "helpers", "tandem_tier.py")
# --middle's tiers listen at BASE + this + i
MIDDLE_PORTS = 50


def ranges(r):
    return "0.1-0.3" if r < 0.35 else "0.4-0.6" if r < 0.65 else "0.7-0.9"


def wait_listening(port, secs=5):
    end = time.time() + secs
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def realized(spans, t0, t1):
    """Fraction of [t0, t1] covered by the union of the sorted spans."""
    busy, reach = 0, t0
    for s, e in spans:
        if s >= t1:
            break
        s, e = max(s, reach), min(e, t1)
        if e > s:
            busy += e - s
            reach = e
    return busy / (t1 - t0)


def read_spans(path):
    """(service spans, presence spans) of a tier's --spans file."""
    with open(path, encoding="utf-8") as f:
        rows = [tuple(int(x) for x in l.split()) for l in f if l.strip()]
    return (sorted((r[1], r[2]) for r in rows),
            sorted((r[0], r[3]) for r in rows))


def write_config(a, combos, base, cfg, out):
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(f"interval: {a.interval}s\nservices:\n")
        for i in range(len(combos)):
            f.write(f"  - {{ name: front-{i}, match: {{ port: {base + 2 * i} }} }}\n")
            f.write(f"  - {{ name: back-{i}, match: {{ port: {base + 2 * i + 1} }} }}\n")
        if a.client_side:
            f.write("  - { name: callers, match: { comm: tandem-caller } }\n")
        f.write("collectors:\n  tcp:\n    requests: none\n    occupancy:\n")
        window = f", window: {a.window}s" if a.window else ""
        if a.slide:
            window += f", slide: {a.slide}"
        for i in range(len(combos)):
            f.write(f"      - {{ service: front-{i}, tiers: 2{window} }}\n")
            if a.client_side:
                f.write(f"      - {{ endpoint: \"127.0.0.1:{base + 2 * i}\", "
                        f"tiers: 2 }}\n")
        f.write(f"exporters:\n  - {{ type: file, path: \"{out}\" }}\n")
    os.chmod(cfg, 0o600)


def tier_cmd(a, impl, port, nxt, rho, seed, spans):
    """A tier's command: tandem.c's (C) or tandem_tier.py's (Python, one
    thread on an event loop; impl "cpu" or "wait", its --serve)."""
    common = ["--port", str(port), "--mean-us", str(rho / a.rate * 1e6),
              "--seed", str(seed), "--spans", os.path.join(a.work, spans)]
    if impl != "c":
        return (["python3", TANDEM_TIER, "--serve", impl] + common +
                (["--next", str(nxt)] if nxt else []))
    if not nxt:
        return [a.tandem, "tier2"] + common
    return ([a.tandem, "tier1", "--next", str(nxt)] + common +
            ["--threads", str(int(a.front_threads)), "--dist", a.dist,
             "--handoff-us", str(a.handoff_us)])


def start_tiers(a, combos, base, procs):
    for i, (r1, r2) in enumerate(combos):
        p1, p2 = base + 2 * i, base + 2 * i + 1
        procs.append(subprocess.Popen(tier_cmd(
            a, a.back, p2, 0, r2, a.seed * 1000 + 2 * i + 2, f"t2-{i}.spans")))
        wait_listening(p2)
        if a.middle:
            # --middle: a third tier between them, unknown to kmond
            pm = base + MIDDLE_PORTS + i
            procs.append(subprocess.Popen(tier_cmd(
                a, "c", pm, p2, a.middle, a.seed * 1000 + 700 + i,
                f"tm-{i}.spans")))
            wait_listening(pm)
            p2 = pm
        procs.append(subprocess.Popen(tier_cmd(
            a, a.front, p1, p2, r1, a.seed * 1000 + 2 * i + 1,
            f"t1-{i}.spans")))
        wait_listening(p1)


def run_batch(a, combos, base, log):
    procs = []
    cfg = os.path.join(a.work, "kmond.yaml")
    out = os.path.join(a.work, "out.json")
    err = os.path.join(a.work, "kmond.err")
    # the clients under a name of their own (comm: the name run by)
    caller = os.path.join(a.work, "tandem-caller")
    if not os.path.exists(caller):
        os.symlink(os.path.realpath(a.tandem), caller)
    try:
        start_tiers(a, combos, base, procs)
        write_config(a, combos, base, cfg, out)
        if os.path.exists(out):
            os.unlink(out)
        offset = time.time_ns() - time.monotonic_ns()
        # by default above the tandems' real-time threads (tandem.c), or
        # many of them at once starve its user space, and the ring of
        # steps overflows
        kmond = subprocess.Popen(["chrt", "-f", str(a.kmond_prio), a.kmond,
                                  "-c", cfg],
                                 stdout=subprocess.DEVNULL,
                                 stderr=open(err, "w"))
        procs.append(kmond)
        for _ in range(100):
            if "running on" in open(err, encoding="utf-8").read():
                break
            time.sleep(0.1)
        else:
            sys.exit("kmond did not start:\n" + open(err).read())
        count = int(a.rate * a.interval * (a.samples + 2))
        clients = [subprocess.Popen(
            [caller, "client", "--port", str(base + 2 * i), "--rate",
             str(a.rate), "--count", str(count), "--seed",
             str(a.seed * 1000 + 500 + i),
             "--per-request", str(int(a.per_request))],
            stdout=subprocess.PIPE)
            for i in range(len(combos))]
        procs += clients
        for c in clients:
            if c.wait() != 0:
                sys.exit("a client failed")
        kmond.send_signal(signal.SIGTERM)
        if kmond.wait(30) != 0:
            sys.exit("kmond failed:\n" + open(err).read())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    recs = [json.loads(l) for l in open(out, encoding="utf-8")]
    return score_batch(a, combos, base, recs, offset, log)


def score_batch(a, combos, base, recs, offset, log):
    results = []
    for i, (r1, r2) in enumerate(combos):
        t1, held1 = read_spans(os.path.join(a.work, f"t1-{i}.spans"))
        t2, held2 = read_spans(os.path.join(a.work, f"t2-{i}.spans"))
        tm = (read_spans(os.path.join(a.work, f"tm-{i}.spans"))[0]
              if a.middle else None)
        # each tier's own clock over its tandem's run (from the first
        # request in to the last out), against its configuration
        run = (held1[0][0], max(e for _, e in held1))
        results.append({"combo": (r1, r2), "served": len(t1), "clock": (
            realized(t1, run[0], run[1]), realized(t2, run[0], run[1]))})
        for side, key, name in (("server", "service", f"front-{i}"),
                                ("client", "endpoint",
                                 f"127.0.0.1:{base + 2 * i}")):
            occ = [r for r in recs if r["kind"] == "occupancy" and
                   r.get(key) == name and r["scope"] == "interval"]
            # the first interval warms up; a short one is the last,
            # partial
            full = [r for r in occ[1:]
                    if r["samples"] >= 0.8 * a.rate * a.interval]
            for r in full[:a.samples]:
                end = r["ts"] - offset
                start = end - r["span_ns"]
                real = (realized(t1, start, end), realized(t2, start, end))
                if tm:
                    # three tiers fitted as two: the truth is the two
                    # busiest (the third's lies in their estimates)
                    real = tuple(sorted(real + (realized(tm, start, end),),
                                        reverse=True)[:2])
                results.append({"combo": (r1, r2), "side": side, "rec": r,
                                "real": real})
                log.write(json.dumps({"combo": [r1, r2], "side": side,
                                      "real": real, "rho": r["rho"],
                                      "rho_lo": r.get("rho_lo"),
                                      "rho_hi": r.get("rho_hi"),
                                      "ts": r["ts"],
                                      "fit": r["fit"],
                                      "samples": r["samples"]}) + "\n")
        loads = [r for r in recs if r["kind"] == "load" and
                 r.get("service") == f"back-{i}"]
        for r in loads[1:-1]:
            end = r["ts"] - offset
            start = end - r["interval_ns"]
            results.append({"combo": (r1, r2), "busy": r["busy"],
                            "span": (start, end),
                            "held": realized(held2, start, end),
                            "util": realized(t2, start, end)})
    for r in recs:
        if r["kind"] == "occupancy" and r["scope"] == "window":
            results.append({"window": r})
        if r["kind"] == "occupancy" and r["scope"] == "sliding":
            i = int(r["service"].split("-")[1])
            results.append({"sliding": r, "combo": combos[i]})
    stats = [r for r in recs if r["kind"] == "stats"]
    if stats:
        tcp = stats[-1]["collectors"]["tcp"]
        results.append({"lost": tcp["lost"], "steps_lost": tcp["steps_lost"]})
    return results


def errors(rho, truth):
    """Sorted pairs: the higher truth against the higher estimate."""
    e0 = abs(max(rho) - max(truth))
    e1 = abs(min(rho) - min(truth))
    return e0, e1, math.hypot(e0, e1)


def mean_sd(v):
    m = sum(v) / len(v)
    return m, math.sqrt(max(0, sum(x * x for x in v) / len(v) - m * m))


def covers(x):
    """Whether each tier's interval holds its realized utilization (the
    tier's own busy clock), sorted as rho: (high, low), or None."""
    r = x["rec"]
    if not r.get("rho_lo") or not r.get("rho_hi"):
        return None
    truth = sorted(x["real"], reverse=True)
    return tuple(lo <= t <= hi for lo, hi, t in
                 zip(r["rho_lo"], r["rho_hi"], truth))


def coverage(ok):
    cov = [c for c in (covers(x) for x in ok) if c is not None]
    if not cov:
        return "credible intervals: none"
    return (f"credible intervals in {len(cov)} of {len(ok)} estimates: "
            f"holding the realized utilization high "
            f"{sum(c[0] for c in cov) / len(cov):.3f}, low "
            f"{sum(c[1] for c in cov) / len(cov):.3f}")


def dishonest(est, within):
    """The estimates that hold, off the realized utilization by more
    than `within` on a tier, whose interval does not hold it there."""
    bad = []
    for x in est:
        r = x["rec"]
        if not r["fit"]["holds"]:
            continue
        truth = sorted(x["real"], reverse=True)
        c = covers(x) or (False, False)
        for i, t in enumerate(truth):
            if abs(r["rho"][i] - t) > within and not c[i]:
                bad.append(x)
                break
    return bad


def table(est, a, what):
    """Prints the figures of one side's estimates; returns (MAE high, MAE
    low, mean distance, refused, not refined by the sequence)."""
    refused = [x for x in est if x["rec"]["rho"] is None]
    ok = [x for x in est if x["rec"]["rho"] is not None]
    if not ok:
        print(f"{what}: no estimate at all")
        return None
    cells = {}
    for x in ok:
        r1, r2 = x["combo"]
        cells.setdefault((ranges(r1), ranges(r2)), []).append(x)
    conf = [errors(x["rec"]["rho"], x["combo"]) for x in ok]
    real = [errors(x["rec"]["rho"], x["real"]) for x in ok]
    floor = [errors(x["real"], x["combo"]) for x in ok]
    mae0 = sum(e[0] for e in conf) / len(ok)
    mae1 = sum(e[1] for e in conf) / len(ok)
    mean, sd = mean_sd([e[2] for e in conf])
    cpu = [x["rec"]["fit"]["cpu_ns"] for x in est]
    seq = [x for x in ok if x["rec"]["fit"].get("sequence")]
    given = [x for x in ok if x["rec"]["fit"].get("given_n")]
    print(f"{what}: {len(set(x['combo'] for x in est))} pairs, {len(est)} "
          f"samples (rate {a.rate}/s, interval {a.interval} s, "
          f"{sum(x['rec']['samples'] for x in est) / len(est):.0f} "
          f"requests a sample)")
    print(f"  against the configured utilizations: MAE high {mae0:.4f}, low "
          f"{mae1:.4f}; euclidean {mean:.4f} +- {sd:.4f}")
    print(f"  against each sample's realized utilization: MAE high "
          f"{sum(e[0] for e in real) / len(ok):.4f}, low "
          f"{sum(e[1] for e in real) / len(ok):.4f}; euclidean "
          f"{sum(e[2] for e in real) / len(ok):.4f} (the realized against "
          f"the configured: {sum(e[0] for e in floor) / len(ok):.4f}, "
          f"{sum(e[1] for e in floor) / len(ok):.4f}; "
          f"{sum(e[2] for e in floor) / len(ok):.4f})")
    print(f"  {coverage(ok)}")
    print(f"  refused {len(refused)} of {len(est)}; refined by the sequence "
          f"{len(seq)}, by the sums given n {len(given)}; estimator cpu "
          f"{sum(cpu) / len(cpu) / 1e6:.2f} ms per interval "
          f"(max {max(cpu) / 1e6:.2f})")
    delays = sorted(x["rec"]["fit"].get("delay_ns", 0) for x in seq)
    if delays:
        print(f"  fixed delay found (fit.delay_ns) in {sum(d > 0 for d in delays)} "
              f"of {len(delays)} sequence fits; median "
              f"{delays[len(delays) // 2] / 1e3:.0f} us, largest "
              f"{delays[-1] / 1e3:.0f} us")
    print("  rho1     rho2     MAE-high MAE-low  euclid           samples")
    worst = 0
    for k in sorted(cells):
        e = [errors(x["rec"]["rho"], x["combo"]) for x in cells[k]]
        m, s = mean_sd([x[2] for x in e])
        worst = max(worst, m)
        print(f"  {k[0]:8} {k[1]:8} {sum(x[0] for x in e) / len(e):.4f}   "
              f"{sum(x[1] for x in e) / len(e):.4f}   {m:.4f} +- {s:.4f}  "
              f"{len(e)}")
    print(f"  worst range {worst:.4f}")
    return mae0, mae1, mean, len(refused), len(ok) - len(seq)


def check_load(results, a):
    """Prints the measured load's checks; returns 1 when one fails. Sets
    a.model_holds: whether the tandems were the queues of the model."""
    busy = [x for x in results if "busy" in x]
    clocks = [x for x in results if "clock" in x]
    lost = sum(x["lost"] for x in results if "lost" in x)
    berr = [abs(x["busy"] - x["held"]) for x in busy]
    uerr = [abs(x["busy"] - x["util"]) for x in busy]
    cerr = [abs(x["busy"] - x["combo"][1]) for x in busy]
    # a run's own chance: with N requests the realized utilization has an
    # sd of rho sqrt(2 / N) (the services' and the arrivals' spread)
    clk = [(c - r, r * math.sqrt(2 / max(1, x["served"])))
           for x in clocks for c, r in zip(x["clock"], x["combo"])]
    bad = 0
    steps_lost = sum(x["steps_lost"] for x in results if "steps_lost" in x)
    print(f"kmond lost {lost} (the tcp collector's: ring and map losses, "
          f"protocol samples of connections past its table, runs the kernel "
          f"skipped), of which the targets' steps {steps_lost}")
    if clk:
        bias = sum(d for d, _ in clk) / len(clk)
        print(f"each tier's own clock over its run against its configured "
              f"utilization, {len(clk)} tiers: max {max(abs(d) for d, _ in clk):.4f} "
              f"(a run's own sd at most {max(sd for _, sd in clk):.4f}), "
              f"mean {bias:+.4f}")
    if berr:
        worst = max(busy, key=lambda x: abs(x["busy"] - x["held"]))
        print(f"the worst interval: busy {worst['busy']:.4f}, held "
              f"{worst['held']:.4f}, {worst['span'][0] / 1e9:.3f} to "
              f"{worst['span'][1] / 1e9:.3f} s (monotonic), tandem "
              f"{worst['combo']}")
        print(f"measured busy of tier 2 over {len(berr)} intervals, max "
              f"(mean) difference from: the time tier 2 held requests "
              f"{max(berr):.4f} ({sum(berr) / len(berr):.4f}); its realized "
              f"utilization {max(uerr):.4f} ({sum(uerr) / len(uerr):.4f}); "
              f"the configured rho2 {max(cerr):.4f} "
              f"({sum(cerr) / len(cerr):.4f})")
    # off by more than the bound beyond four of the run's own sd, or
    # off on average (the tiers oversleep, say)
    far = [d for d, sd in clk if abs(d) > a.max_clock_err + 4 * sd] \
        if a.max_clock_err is not None else []
    if a.max_clock_err is not None and clk and (
            far or abs(sum(d for d, _ in clk) / len(clk)) > a.max_clock_err):
        print(f"FAIL: the tiers' clocks are off their configuration by more "
              f"than {a.max_clock_err} ({len(far)} beyond their run's chance, "
              f"or on average)", file=sys.stderr)
        bad = 1
    over = [x["held"] - x["util"] for x in busy]
    a.model_holds = not (a.max_overhead is not None and over and
                         max(over) > a.max_overhead)
    # where it does not hold, busy is only the time tier 2 held requests
    if not a.model_holds:
        print(f"note: the estimates' bounds are not judged, nor busy against "
              f"the realized utilization: this machine is too slow for the "
              f"tandems to be the model's queues (tier 2 held requests "
              f"without serving them for up to {max(over):.4f} of an "
              f"interval, > {a.max_overhead})")
        uerr = []
    if a.max_busy_err is not None and (
            not berr or max(berr + uerr) > a.max_busy_err):
        print(f"FAIL: measured busy off by more than {a.max_busy_err}",
              file=sys.stderr)
        bad = 1
    # a fit whose steps were lost (counted) is not refined by them
    a.steps_whole = steps_lost == 0
    if a.require_sequence and not a.steps_whole:
        print(f"note: fits not refined by the sequence are not judged: "
              f"{steps_lost} steps lost (counted)")
    return bad


def report(results, a):
    rc = check_load(results, a)
    sides = [("server", "estimates from the server side of the front")]
    if a.client_side:
        sides.append(("client", "estimates from the callers' side"))
    for side, what in sides:
        est = [x for x in results if x.get("side") == side]
        got = table(est, a, what)
        if got is None and a.honest is not None and est:
            # none holds: honest, if each says why
            print(f"  honest: none of {len(est)} estimates holds: "
                  f"{sorted(set(x['rec']['fit']['why'] for x in est))}")
            continue
        if got is None:
            rc = 1
            continue
        mae0, mae1, mean, refused, unrefined = got
        if a.honest is not None:
            bad = dishonest(est, a.honest)
            for x in bad:
                print(f"FAIL: {side}: holds, off by more than {a.honest} "
                      f"outside its interval: realized {x['real']}, rho "
                      f"{x['rec']['rho']}, {x['rec']['rho_lo']} to "
                      f"{x['rec']['rho_hi']}; overtaken "
                      f"{x['rec']['fit'].get('overtaken')}, sequence "
                      f"{x['rec']['fit'].get('sequence')}", file=sys.stderr)
            rc |= bool(bad)
            held = len(est) - refused
            print(f"  honest: {held} of {len(est)} estimates hold, "
                  f"{len(bad)} of them wrong by more than {a.honest} "
                  f"outside their interval; the others say why not: "
                  f"{sorted(set(x['rec']['fit']['why'] for x in est if not x['rec']['fit']['holds']))}")
        if a.require_sequence and a.steps_whole and unrefined:
            print(f"FAIL: {side}: {unrefined} fits not refined by the "
                  f"sequence of arrivals and departures", file=sys.stderr)
            rc = 1
        if not a.model_holds:
            continue
        if a.max_mae is not None and max(mae0, mae1) > a.max_mae:
            print(f"FAIL: {side}: MAE above {a.max_mae}", file=sys.stderr)
            rc = 1
        if a.max_mae_low is not None and mae1 > a.max_mae_low:
            print(f"FAIL: {side}: MAE of the lower layer above "
                  f"{a.max_mae_low}", file=sys.stderr)
            rc = 1
        if a.max_dist is not None and mean > a.max_dist:
            print(f"FAIL: {side}: mean distance above {a.max_dist}",
                  file=sys.stderr)
            rc = 1
        if refused > a.max_refused * len(est):
            print(f"FAIL: {side}: {refused} of {len(est)} samples refused",
                  file=sys.stderr)
            rc = 1
    sliding = [x for x in results if "sliding" in x]
    if a.slide:
        ok = [x for x in sliding if x["sliding"]["rho"] is not None]
        short = [x for x in sliding if x["sliding"]["samples"] < a.slide]
        seq = [x for x in ok if x["sliding"]["fit"].get("sequence")]
        print(f"sliding windows of {a.slide} requests: {len(sliding)}, "
              f"{len(ok)} hold, refined by the sequence {len(seq)}")
        if ok:
            e = [errors(x["sliding"]["rho"], x["combo"]) for x in ok]
            print(f"  against the configured utilizations: MAE high "
                  f"{sum(x[0] for x in e) / len(e):.4f}, low "
                  f"{sum(x[1] for x in e) / len(e):.4f}")
        if not sliding or short:
            print(f"FAIL: no sliding window, or {len(short)} of fewer "
                  f"than {a.slide} requests", file=sys.stderr)
            rc = 1
        if a.require_sequence and a.steps_whole and len(seq) < len(ok):
            print("FAIL: sliding windows not refined by the sequence",
                  file=sys.stderr)
            rc = 1
    windows = [x["window"] for x in results if "window" in x]
    if a.window:
        seq = [w for w in windows if w["fit"].get("sequence")]
        print(f"windows of {a.window} s: {len(windows)}, refined by the "
              f"sequence {len(seq)}")
        if a.require_sequence and a.steps_whole and (
                not windows or len(seq) < len(windows)):
            print("FAIL: windows not refined by the sequence",
                  file=sys.stderr)
            rc = 1
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kmond", required=True)
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--combos")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--batch", type=int, default=9)
    # kmond's SCHED_FIFO priority, above the tiers' 10 by default
    ap.add_argument("--kmond-prio", type=int, default=20)
    ap.add_argument("--rate", type=float, default=100)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int,
                    help="the fronts' targets also over windows of this many s")
    ap.add_argument("--slide", type=int,
                    help="the fronts' targets also over sliding windows "
                    "of this many requests")
    ap.add_argument("--client-side", action="store_true",
                    help="the fronts' endpoints are targets of their callers")
    ap.add_argument("--front-threads", action="store_true",
                    help="tier 1 a thread-per-connection front (tandem.c)")
    ap.add_argument("--handoff-us", type=float, default=0,
                    help="with --front-threads: a random hand-off delay "
                    "(exponential, of this mean) after tier 1's service")
    ap.add_argument("--dist", default="exponential",
                    help="the tiers' service times: exponential, fixed or "
                    "lognormal (tandem.c)")
    ap.add_argument("--front", choices=("c", "cpu", "wait"), default="c",
                    help="tier 1 in C (tandem.c) or in Python on an event "
                    "loop (tandem_tier.py --serve cpu or wait)")
    ap.add_argument("--back", choices=("c", "cpu", "wait"), default="c",
                    help="tier 2, the same way")
    ap.add_argument("--middle", type=float, default=0,
                    help="a third tier (C) of this utilization between "
                    "them; kmond still fits two")
    ap.add_argument("--per-request", action="store_true",
                    help="the clients open a connection per request")
    ap.add_argument("--honest", type=float,
                    help="every estimate that holds is within this of each "
                    "tier's realized utilization, or its interval holds it")
    ap.add_argument("--max-mae", type=float)
    ap.add_argument("--max-mae-low", type=float)
    ap.add_argument("--max-dist", type=float)
    ap.add_argument("--max-busy-err", type=float)
    ap.add_argument("--max-clock-err", type=float)
    ap.add_argument("--require-sequence", action="store_true",
                    help="every fit refined by the sequence of steps")
    ap.add_argument("--max-overhead", type=float)
    ap.add_argument("--max-refused", type=float, default=0.1,
                    help="largest fraction of samples refused")
    a = ap.parse_args()
    if a.grid:
        combos = [(i / 10, j / 10) for i in range(1, 10) for j in range(1, 10)]
    else:
        combos = [tuple(float(x) for x in c.split(","))
                  for c in a.combos.split()]
    results = []
    began = time.monotonic()
    with open(os.path.join(a.work, "samples.jsonl"), "a") as log:
        for b in range(0, len(combos), a.batch):
            batch = combos[b:b + a.batch]
            print(f"batch {b // a.batch + 1}: {batch}", file=sys.stderr)
            results += run_batch(a, batch, a.port, log)
    print(f"{len(combos)} pairs in {time.monotonic() - began:.0f} s")
    sys.exit(report(results, a))


main()
