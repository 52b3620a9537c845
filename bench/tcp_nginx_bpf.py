#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The BPF rounds of bench/tcp-nginx.sh: the tcp collector's kernel time
per request in each mode, as a multiple of the floor's.

Input lines: MODE ROUND REQUESTS PROGRAM RUN_TIME_NS RUN_CNT (one per
program of the tcp collector that ran, bpf_stats held on). A round's cost
is the run time of all of them over wrk's requests. The send hook
(sock_send_length) runs once per send of nginx and wrk, the same number
per request in every mode: a round where it ran more than 2% more often
per request than in the leanest round saw another workload's sends, and
is left out.
  tcp_nginx_bpf.py FILE"""
import collections
import statistics
import sys

WHAT = {
    "floor": "an empty program on each hook",
    "idle": "tcp on, neither nginx nor wrk monitored",
    "none": "nginx monitored, requests: none",
    "all": "nginx monitored, requests: all",
    "client": "wrk monitored (client side), requests: all",
    "hash": "as all, iterators refused: the state in the hash",
}
# program name -> its hook (kmond's candidates and the floor's)
HOOKS = (
    ("tcp_recv", "sock_recv_length"),
    ("tcp_send_entry", "tcp_sendmsg_locked"),
    ("tcp_send", "sock_send_length"),
    ("tcp_state", "inet_sock_set_state"),
    ("proto_ingress", "cgroup ingress"),
)
SEND_HOOK = "sock_send_length"


def hook_of(prog):
    for prefix, hook in HOOKS:
        if prog.startswith(prefix):
            return hook
    return "other"


def spread(xs):
    return "%5.0f [%4.0f .. %4.0f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    # (mode, round) -> {hook: [ns, runs]}, and the round's requests
    runs = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
    reqs = {}
    for line in open(sys.argv[1]):
        mode, rnd, n, prog, ns, cnt = line.split()
        key = (mode, int(rnd))
        reqs[key] = int(n)
        h = runs[key][hook_of(prog)]
        h[0] += int(ns)
        h[1] += int(cnt)
    sends = {k: v[SEND_HOOK][1] / reqs[k] for k, v in runs.items() if reqs[k]}
    lean = min(sends.values())
    kept = {k for k, s in sends.items() if s <= lean * 1.02}
    left = collections.Counter(k[0] for k in runs if k not in kept)
    cost = {k: sum(h[0] for h in runs[k].values()) / reqs[k] for k in kept}
    by_mode = collections.defaultdict(list)
    for (mode, _), c in cost.items():
        by_mode[mode].append(c)
    floor = statistics.median(by_mode["floor"]) if by_mode["floor"] else 0

    print("BPF time per request of the tcp collector (every program it ran, "
          "run_time_ns / wrk's requests), median [min .. max] of the rounds:")
    for mode in WHAT:
        xs = by_mode.get(mode)
        if not xs:
            print("  %-7s no round kept" % mode)
            continue
        ratio = ("%4.2fx floor" % (statistics.median(xs) / floor)
                 if floor else "(no floor)")
        print("  %-7s %s ns  %s  (%d rounds; %s)"
              % (mode, spread(xs), ratio, len(xs), WHAT[mode]))
    print("  sends per request %.2f; rounds left out (the send hook ran "
          "more often: other traffic on the host): %s"
          % (lean, ", ".join("%s %d (%s)" % (m, n, " ".join(
              "%.2f" % sends[k] for k in sorted(runs) if k[0] == m and k not in kept))
              for m, n in sorted(left.items())) or "none"))

    # one side over idle, paired within a round
    def over_idle(mode):
        return [cost[(mode, r)] - cost[("idle", r)]
                for (m, r) in kept if m == mode and ("idle", r) in kept]
    server, client = over_idle("all"), over_idle("client")
    if server and client:
        s, c = statistics.median(server), statistics.median(client)
        print("following one side, over idle (median of the rounds' "
              "differences): server side (all) %.0f ns per request, client "
              "side (client) %.0f ns per request: client / server %.2f"
              % (s, c, c / s if s else 0))

    hooks = sorted({h for k in kept for h in runs[k] if runs[k][h][1]},
                   key=lambda h: [x[1] for x in HOOKS].index(h)
                   if h in [x[1] for x in HOOKS] else 99)
    print("per hook, median ns per run (runs per request):")
    print("  %-20s" % "" + "".join("%16s" % m for m in WHAT))
    for h in hooks:
        row = "  %-20s" % h
        for mode in WHAT:
            ks = [k for k in kept if k[0] == mode and runs[k][h][1]]
            if not ks:
                row += "%16s" % "-"
                continue
            per_run = statistics.median(runs[k][h][0] / runs[k][h][1] for k in ks)
            per_req = statistics.median(runs[k][h][1] / reqs[k] for k in ks)
            row += "%16s" % ("%.0f (%.2f)" % (per_run, per_req))
        print(row)


if __name__ == "__main__":
    main()
