# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Writes the tcp records three kmond nodes would write for a small
fleet, with ids as kmond gives them, and the traces kmon-trace must make
of them (the ground truth).

  trace_gen.py OUTDIR [--requests N] [--seed S] [--gap-us G]

Front requests begin G to 3G microseconds apart (default 1000: some
overlap; 1: a dense stream, thousands of requests within milliseconds).

node-1 runs frontend (its callers are outside: every front request starts
a trace); node-2 runs api and redis; node-3 runs back. Front request i:
  i % 4 == 0  calls nothing
  i % 4 == 1  calls api through a virtual address (destination NAT: the
              client's raddr is 10.96.0.10:80, the server's laddr
              10.0.0.2:8080); api calls redis on its own node and a
              database no kmond watches
  i % 4 == 2  calls api twice in parallel (two connections, no NAT);
              each api request calls redis
  i % 4 == 3  calls api, which calls back on node-3 (three nodes deep)
Besides, node-2 serves health checks from an unmonitored prober: a trace
of one span each.

Request outcomes (docs/design/outcomes.md): node-1 and node-2 run a kmond
that writes them, node-3 one from before them (no status, no error). Some
HTTP requests get 404 (an error on the client end only) or 500, some
redis calls a WRONGTYPE error reply, some database calls a syntax error
(SQLSTATE 42601); both ends of an exchange see the same status.

Each node's daemon knows only its own side: a server request with no
known caller gets a new trace, a call made while serving one gets its
parent and trace. The ends of one exchange share req_seq, resp_seq and
the client's port, nothing else.

OUTDIR gets node-1.json, node-2.json, node-3.json (each node's records
in the order kmond writes them: by end time) and expected.json:
{"traces": [{"spans": {span_id: parent_id or ""}, "root": span_id}],
 "spans": {span_id: {"kind": "server"|"client", "service", "node",
                     "outcome": {"error": bool, "status", "method",
                                 "route", "error.type" when known}}},
 "records", "exchanges_joined", "unmatched_client", "unmatched_server"}.
"""
import argparse
import json
import os
import random

US = 1000
OLD_NODES = ("node-3",)  # a kmond from before request outcomes


def pick_status(rng, proto):
    """The outcome of one exchange, the same at both ends: an HTTP code,
    a Redis error word or a SQLSTATE; None for a plain success."""
    r = rng.random()
    if proto == "http":
        return 500 if r < 0.15 else 404 if r < 0.3 else 200
    if proto == "redis":
        return "WRONGTYPE" if r < 0.2 else None
    if proto == "postgresql":
        return "42601" if r < 0.3 else None
    return None


def outcome_fields(proto, side, status):
    """The fields kmond writes for it, error as OpenTelemetry says."""
    if proto == "http":
        return {"status": status,
                "error": status >= (500 if side == "server" else 400),
                "method": "GET", "route": "/items/{id}"}
    f = {"error": status is not None}
    if status is not None:
        f["status"] = status
    return f


def expected_outcome(fields):
    """What kmon-trace must make of them (trace_check.py reads it back)."""
    out = {"error": fields.get("error") is True}
    for k in ("status", "method", "route"):
        if k in fields:
            out[k] = str(fields[k])
    if out["error"]:
        out["error.type"] = str(fields.get("status", "_OTHER"))
    return out


class Node:
    def __init__(self, name, addr, rng):
        self.name, self.addr = name, addr
        self.prefix = rng.getrandbits(32)  # per kmond start
        self.counter = 0
        self.records = []

    def new_id(self):
        self.counter += 1
        return "%08x%08x" % (self.prefix, self.counter)


class Fleet:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = {n: Node(n, a, rng) for n, a in
                      (("node-1", "10.0.0.1"), ("node-2", "10.0.0.2"),
                       ("node-3", "10.0.0.3"))}
        self.services = {  # service -> (node, pid, port, protocol)
            "frontend": ("node-1", 101, 80, "http"),
            "api": ("node-2", 202, 8080, "http"),
            "redis": ("node-2", 203, 6379, "redis"),
            "back": ("node-3", 301, 9000, "http"),
        }
        self.truth = {}  # span id -> parent id ("" for a root)
        self.spans = {}
        self.trace_of = {}  # span id -> the root span id of its true trace
        self.joined = 0
        self.unmatched_client = 0
        self.unmatched_server = 0

    def record(self, node, side, svc, t0, t1, laddr, lport, raddr, rport,
               req_seq, resp_seq, sid, trace, parent=None, dst=None,
               protocol=None, comm=None, status=None):
        n = self.nodes[node]
        pid = self.services[svc][1] if svc in self.services else 999
        r = {"kind": "tcp", "ts": t1, "node": node, "pid": pid,
             "comm": comm or svc, "service": svc, "tid": pid + 1,
             "family": "ipv4", "laddr": laddr, "lport": lport,
             "raddr": raddr, "rport": rport, "latency_ns": t1 - t0,
             "req_bytes": self.rng.randrange(40, 400),
             "resp_bytes": self.rng.randrange(40, 4000),
             "side": side, "req_seq": req_seq, "resp_seq": resp_seq,
             "id": sid, "trace": trace}
        if protocol:
            r["protocol"] = protocol
        outcome = {}
        if node not in OLD_NODES:
            outcome = outcome_fields(protocol, side, status)
            r.update(outcome)
        if side == "client":
            r["dst"] = dst
            if parent:
                r["parent"] = parent
                r["link"] = "thread"
        n.records.append(r)
        self.spans[sid] = {"kind": side, "service": svc, "node": node,
                           "outcome": expected_outcome(outcome)}

    def new_trace(self):
        return "%032x" % self.rng.getrandbits(128)

    def serve(self, svc, t0, t1, caller, root, client_addr, client_port,
              req_seq, resp_seq, calls, status=None):
        """A request to svc; calls(t0, t1, sid, trace, root) makes its
        downstream calls. caller: the client span id when the caller is
        monitored (the server's kmond still does not know it)."""
        node, _, port, proto = self.services[svc]
        n = self.nodes[node]
        sid, trace = n.new_id(), self.new_trace()
        root = root or sid
        if not caller:  # no monitored caller chose it
            status = pick_status(self.rng, proto)
        self.truth[sid] = caller or ""
        self.trace_of[sid] = root
        if not caller:
            self.unmatched_server += 1
        calls(t0, t1, sid, trace, root)
        self.record(node, "server", svc, t0, t1, n.addr, port, client_addr,
                    client_port, req_seq, resp_seq, sid, trace,
                    protocol=proto, status=status)

    def call(self, from_svc, parent, trace, root, t0, t1, to_svc,
             nat=False, calls=None):
        """A call from from_svc (serving parent) to to_svc; to_svc None:
        a database no kmond watches."""
        node = self.services[from_svc][0]
        n = self.nodes[node]
        sid = n.new_id()
        lport = self.rng.randrange(32768, 61000)
        req_seq, resp_seq = self.rng.getrandbits(32), self.rng.getrandbits(32)
        self.truth[sid] = parent
        self.trace_of[sid] = root
        if to_svc is None:
            raddr, rport, proto, dst = "192.0.2.50", 5432, "postgresql", \
                "192.0.2.50"
            status = pick_status(self.rng, proto)
            self.unmatched_client += 1
        else:
            snode, _, sport, proto = self.services[to_svc]
            raddr, rport = self.nodes[snode].addr, sport
            if nat:
                raddr, rport = "10.96.0.10", 80
            dst = to_svc if snode == node else raddr
            # the server sees it a little later and answers a little
            # sooner: network time both ways
            s0, s1 = t0 + 40 * US, t1 - 40 * US
            status = pick_status(self.rng, proto)
            self.serve(to_svc, s0, s1, sid, root, n.addr, lport, req_seq,
                       resp_seq, calls or (lambda *a: None), status)
            self.joined += 1
        self.record(node, "client", from_svc, t0, t1, n.addr, lport, raddr,
                    rport, req_seq, resp_seq, sid, trace, parent=parent,
                    dst=dst, protocol=proto, status=status)

    def front_request(self, i, t0):
        rng = self.rng
        kind = i % 4
        t1 = t0 + rng.randrange(2000, 6000) * US

        def api_calls(with_back):
            def calls(a0, a1, sid, trace, root):
                self.call("api", sid, trace, root, a0 + 100 * US,
                          a0 + 400 * US, "redis")
                if with_back:
                    self.call("api", sid, trace, root, a0 + 500 * US,
                              a1 - 100 * US, "back")
                elif kind == 1:
                    self.call("api", sid, trace, root, a0 + 500 * US,
                              a1 - 100 * US, None)
            return calls

        def front_calls(f0, f1, sid, trace, root):
            if kind == 1:
                self.call("frontend", sid, trace, root, f0 + 100 * US,
                          f1 - 100 * US, "api", nat=True,
                          calls=api_calls(False))
            elif kind == 2:
                for _ in range(2):  # in parallel: overlapping in time
                    self.call("frontend", sid, trace, root, f0 + 100 * US,
                              f1 - 100 * US, "api", calls=api_calls(False))
            elif kind == 3:
                self.call("frontend", sid, trace, root, f0 + 100 * US,
                          f1 - 100 * US, "api", calls=api_calls(True))

        client = "203.0.113.%d" % rng.randrange(1, 250)
        self.serve("frontend", t0, t1, None, None, client,
                   rng.randrange(1024, 65536), rng.getrandbits(32),
                   rng.getrandbits(32), front_calls)

    def health_check(self, t0):
        self.serve("api", t0, t0 + 200 * US, None, None, "10.0.0.9",
                   self.rng.randrange(1024, 65536), self.rng.getrandbits(32),
                   self.rng.getrandbits(32), lambda *a: None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--health", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gap-us", type=int, default=1000)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    f = Fleet(rng)
    t = 1795000000 * 10**9
    for i in range(a.requests):
        f.front_request(i, t)
        t += rng.randrange(a.gap_us, 3 * a.gap_us) * US
    for _ in range(a.health):
        f.health_check(t)
        t += 1000 * US
    os.makedirs(a.outdir, exist_ok=True)
    records = 0
    for n in f.nodes.values():
        n.records.sort(key=lambda r: r["ts"])
        records += len(n.records)
        with open(os.path.join(a.outdir, n.name + ".json"), "w") as out:
            for r in n.records:
                out.write(json.dumps(r, separators=(",", ":")) + "\n")
    traces = {}
    for sid, root in f.trace_of.items():
        traces.setdefault(root, {})[sid] = f.truth[sid]
    with open(os.path.join(a.outdir, "expected.json"), "w") as out:
        json.dump({"traces": [{"root": r, "spans": s}
                              for r, s in traces.items()],
                   "spans": f.spans, "records": records,
                   "exchanges_joined": f.joined,
                   "unmatched_client": f.unmatched_client,
                   "unmatched_server": f.unmatched_server}, out)


if __name__ == "__main__":
    main()
