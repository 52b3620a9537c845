#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The demo's load generator: an open loop (Poisson arrivals at --rate
a second, whatever the shop's answers take) of users browsing, adding
to their carts and checking out. Each request's latency is measured from
its arrival, not from when a worker was free to send it, so a slow shop
shows as slow, not as fewer requests.

The log (--log, one JSON line a request) is the ground truth the demo's
test checks kmond against: action, status, latency, and the id the
request carries as X-Demo-Trace (and X-Demo-Parent: the root of the
shop's call tree, demo/app/shop.py); the summary (stdout, one JSON
object) counts them.

  loadgen.py --target HOST:PORT --rate R --duration S --log FILE
             [--users N] [--workers N] [--seed S]"""
import argparse
import http.client
import json
import os
import queue
import random
import threading
import time

# action -> weight; a checkout is preceded by an add to the cart, as a
# user's session goes
MIX = {"home": 30, "product": 35, "add_to_cart": 20, "checkout": 15}
PRODUCTS = 14
MISSING_PRODUCT = 99  # a broken link: the shop answers 404
DECLINED = "4000000000000002"  # passes Luhn, declined by payment
CARD = "4242424242424242"


def card_of(user):
    return DECLINED if user % 10 == 7 else CARD


class Worker:
    """Sends one request at a time on its own keep-alive connection."""

    def __init__(self, target):
        self.host, port = target.rsplit(":", 1)
        self.port = int(port)
        self.conn = None

    def send(self, method, path, body=None, trace=""):
        data = None if body is None else json.dumps(body).encode()
        headers = {"X-Demo-Trace": trace, "X-Demo-Parent": trace}
        if data:
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):  # once more on a connection the shop closed
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                body = resp.read()
                return resp.status, body[:120].decode(errors="replace") if resp.status >= 400 else None
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt:
                    return 0, "no answer"


def requests_of(action, user, rng):
    if action == "home":
        return [("GET", f"/?user={user}", None)]
    if action == "product":
        pid = MISSING_PRODUCT if rng.random() < 0.02 else rng.randint(1, PRODUCTS)
        return [("GET", f"/product/{pid}?currency={rng.choice(['EUR', 'USD', 'GBP'])}", None)]
    add = ("POST", f"/cart/{user}", {"product": rng.randint(1, PRODUCTS), "quantity": rng.randint(1, 3)})
    if action == "add_to_cart":
        return [add]
    return [add, ("POST", f"/checkout/{user}", {"card": card_of(user), "currency": "EUR"})]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--log", required=True)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    actions = list(MIX)
    weights = list(MIX.values())
    todo = queue.Queue()
    log = open(a.log, "w")
    log_lock = threading.Lock()

    def work():
        w = Worker(a.target)
        while True:
            job = todo.get()
            if job is None:
                return
            arrival, action, user, reqs = job
            for method, path, body in reqs:
                sent = time.time()
                trace = os.urandom(8).hex()
                status, error = w.send(method, path, body, trace)
                done = time.time()
                rec = {"arrival": round(arrival, 6), "sent": round(sent, 6), "action": action,
                       "user": user, "trace": trace, "method": method, "path": path.split("?")[0],
                       "status": status, "latency_ms": round((done - arrival) * 1000, 3)}
                if error:
                    rec["error"] = error
                with log_lock:
                    log.write(json.dumps(rec) + "\n")
                arrival = done  # the next step of the session starts now

    workers = [threading.Thread(target=work) for _ in range(a.workers)]
    for t in workers:
        t.start()
    start = time.time()
    at = start
    while True:
        at += rng.expovariate(a.rate)
        if at - start >= a.duration:
            break
        time.sleep(max(0, at - time.time()))
        action = rng.choices(actions, weights)[0]
        user = rng.randrange(a.users)
        todo.put((at, action, user, requests_of(action, user, rng)))
    for _ in workers:
        todo.put(None)
    for t in workers:
        t.join()
    log.close()
    summarize(a.log)


def summarize(path):
    recs = [json.loads(line) for line in open(path)]
    lat = sorted(r["latency_ms"] for r in recs)
    statuses = {}
    for r in recs:
        key = f"{r['action']} {r['method']} {r['path'].split('/')[1] or '/'} {r['status']}"
        statuses[key] = statuses.get(key, 0) + 1

    def pct(p):
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] if lat else 0

    print(json.dumps({"requests": len(recs), "mean_ms": round(sum(lat) / max(1, len(lat)), 3),
                      "p50_ms": pct(50), "p95_ms": pct(95), "p99_ms": pct(99),
                      "by_status": dict(sorted(statuses.items()))}))


if __name__ == "__main__":
    main()
