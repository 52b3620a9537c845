#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A tier of a tandem (tandem.c's protocol: 16-byte messages, echoed) in
Python, on one thread with an event loop (asyncio: non-blocking sockets,
epoll underneath), for issue 44's tandems built differently.

tandem_tier.py --port P [--next P2] --mean-us M --seed S --spans F
               [--serve cpu|wait]

--serve cpu: each request's service is work on the loop's one thread
(the loop does nothing else meanwhile), taken in the order they came: a
FIFO single server, as tandem.c's tiers, written differently.
--serve wait: each request waits its service out on a timer (as for a
disk or a database) while the loop takes others: requests are served
side by side and leave in any order.
--next: then forwards each served request to P2 over one persistent
connection (requests pipelined; P2 answers in order) and answers it
when P2 has. Exponential service times of mean M us. --spans: a line
per request, "arrived start served answered" (CLOCK_MONOTONIC ns), as
tandem.c's."""
import argparse
import asyncio
import collections
import ctypes
import os
import random
import time

MSG = 16
SPIN_NS = 100000


def serve_on_cpu(mean_ns, rng):
    """The loop's thread is busy for an exponential time: sleeps until
    SPIN_NS before its end, then spins (a wakeup comes late)."""
    start = time.monotonic_ns()
    until = start + int(rng.expovariate(1 / mean_ns))
    if until - start > SPIN_NS:
        time.sleep((until - SPIN_NS - start) / 1e9)
    while time.monotonic_ns() < until:
        pass
    return start, time.monotonic_ns()


class Tier:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.mean_ns = a.mean_us * 1000
        self.spans = open(a.spans, "w", encoding="utf-8") if a.spans else None
        self.queue = asyncio.Queue()
        self.next_w = None
        self.pending = collections.deque()  # answers owed by --next, in order

    def log(self, arrived, start, served):
        if self.spans:
            self.spans.write(f"{arrived} {start} {served} "
                             f"{time.monotonic_ns()}\n")
            self.spans.flush()

    async def forward(self, msg, writer, times):
        if self.next_w is None:
            # at the first request: after the monitor started
            r, self.next_w = await asyncio.open_connection("127.0.0.1",
                                                           self.a.next)
            asyncio.get_running_loop().create_task(self.answers(r))
        self.pending.append((writer, times))
        self.next_w.write(msg)

    async def answers(self, reader):
        while True:
            msg = await reader.readexactly(MSG)
            writer, times = self.pending.popleft()
            self.log(*times)
            writer.write(msg)

    async def done(self, msg, writer, times):
        if self.a.next:
            await self.forward(msg, writer, times)
        else:
            self.log(*times)
            writer.write(msg)

    async def fifo(self):
        while True:
            msg, writer, arrived = await self.queue.get()
            start, served = serve_on_cpu(self.mean_ns, self.rng)
            await self.done(msg, writer, (arrived, start, served))

    async def wait_one(self, msg, writer, arrived):
        start = time.monotonic_ns()
        await asyncio.sleep(self.rng.expovariate(1 / self.mean_ns) / 1e9)
        await self.done(msg, writer, (arrived, start, time.monotonic_ns()))

    async def connection(self, reader, writer):
        loop = asyncio.get_running_loop()
        try:
            while True:
                msg = await reader.readexactly(MSG)
                arrived = time.monotonic_ns()
                if self.a.serve == "cpu":
                    self.queue.put_nowait((msg, writer, arrived))
                else:
                    loop.create_task(self.wait_one(msg, writer, arrived))
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def run(self):
        server = await asyncio.start_server(self.connection, "127.0.0.1",
                                            self.a.port, backlog=1024)
        if self.a.serve == "cpu":
            asyncio.get_running_loop().create_task(self.fifo())
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--next", type=int, default=0)
    ap.add_argument("--mean-us", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spans")
    ap.add_argument("--serve", choices=("cpu", "wait"), default="cpu")
    a = ap.parse_args()
    # as tandem.c's tiers: wakeups as asked (PR_SET_TIMERSLACK, 1 ns), and
    # real-time priority, or a busy machine delays them by milliseconds
    ctypes.CDLL(None).prctl(29, 1, 0, 0, 0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except OSError as e:
        print(f"tandem_tier: SCHED_FIFO: {e}")
    asyncio.run(Tier(a).run())


if __name__ == "__main__":
    main()
