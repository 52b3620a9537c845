#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A two-tier loopback application with ground truth, for the tests of
request paths (tcp records' id, trace, parent): a middle service that
makes calls to a back service for each request it serves, and logs which
call belongs to which request.

A request is one line "CALLS SAME\\n": the middle service makes CALLS
calls to the back service, one after the other, on a new connection
each (SAME 0) or all on one new connection (SAME 1), then answers
"done\\n". A call is a line "call\\n", answered "ok\\n".

link_svc.py back --port P [--ready FILE]
    thread per connection, any number of calls per connection
link_svc.py mid --port P --back PORT --mode threads|spawn|asyncio
                --log FILE [--gather K] [--ready FILE]
    threads: a thread per connection (persistent connections: several
    requests one after the other); spawn: the same, but the calls of a
    request are made at once by threads it starts for them (those of a
    request with SAME 1 by one thread); asyncio: one event loop; --gather K:
    each request waits, before its calls, until K requests have been
    read (and not answered) since the last K (a round of K in flight).
    --log: "REQ FRONT_PORT K" when request K (0, 1, ...) of the front
    connection from FRONT_PORT is read, "CALL FRONT_PORT K LPORT" for
    each call it makes from local port LPORT.
link_svc.py front --port P --shapes "C:S,C:S,..." [--conns N]
                  [--per-conn M]
    N connections at once, each sending M requests, one after the other,
    the shapes taken in turn; prints the number of answers."""
import argparse
import asyncio
import socket
import sys
import threading

LOCK = threading.Lock()


def log_line(log, text):
    with LOCK:
        log.write(text + "\n")
        log.flush()


def listener(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(128)
    return s


def ready(a):
    if a.ready:
        open(a.ready, "w").close()


def serve_back(conn):
    with conn:
        f = conn.makefile("rb")
        while f.readline():
            conn.sendall(b"ok\n")


def back(a):
    s = listener(a.port)
    ready(a)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve_back, args=(conn,), daemon=True).start()


def call_back(port, calls, same, log, tag):
    sock = None
    for i in range(calls):
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", port))
            f = sock.makefile("rb")
        log_line(log, f"CALL {tag} {sock.getsockname()[1]}")
        sock.sendall(b"call\n")
        if f.readline() != b"ok\n":
            raise ConnectionError("back did not answer")
        if not same or i == calls - 1:
            f.close()
            sock.close()
            sock = None


def spawn_calls(port, calls, same, log, tag):
    # In parallel, a thread each, made for this request: all the calls
    # on one connection (SAME 1) are one thread's.
    groups = [calls] if same and calls else [1] * calls
    threads = [threading.Thread(target=call_back,
                                args=(port, n, same, log, tag))
               for n in groups]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def serve_mid(conn, a, log):
    front = conn.getpeername()[1]
    with conn:
        f = conn.makefile("rb")
        k = 0
        while True:
            line = f.readline()
            if not line:
                break
            calls, same = (int(x) for x in line.split())
            tag = f"{front} {k}"
            log_line(log, f"REQ {tag}")
            if a.mode == "spawn":
                spawn_calls(a.back, calls, same, log, tag)
            else:
                call_back(a.back, calls, same, log, tag)
            conn.sendall(b"done\n")
            k += 1


def mid_threads(a, log):
    s = listener(a.port)
    ready(a)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve_mid, args=(conn, a, log),
                         daemon=True).start()


async def call_back_async(port, calls, same, log, tag):
    w = None
    for i in range(calls):
        if w is None:
            r, w = await asyncio.open_connection("127.0.0.1", port)
        log_line(log, f"CALL {tag} {w.get_extra_info('sockname')[1]}")
        w.write(b"call\n")
        await w.drain()
        if await r.readline() != b"ok\n":
            raise ConnectionError("back did not answer")
        if not same or i == calls - 1:
            w.close()
            await w.wait_closed()
            w = None


async def mid_asyncio(a, log):
    state = {"round": asyncio.Event(), "read": 0}

    async def gather():
        # The round this request belongs to fills up at K requests read.
        ev = state["round"]
        state["read"] += 1
        if state["read"] == a.gather:
            ev.set()
            state["round"], state["read"] = asyncio.Event(), 0
        await ev.wait()

    async def handle(r, w):
        front = w.get_extra_info("peername")[1]
        k = 0
        while True:
            line = await r.readline()
            if not line:
                break
            calls, same = (int(x) for x in line.split())
            tag = f"{front} {k}"
            log_line(log, f"REQ {tag}")
            if a.gather > 1:
                await gather()
            await call_back_async(a.back, calls, same, log, tag)
            w.write(b"done\n")
            await w.drain()
            k += 1
        w.close()

    server = await asyncio.start_server(handle, sock=listener(a.port))
    ready(a)
    async with server:
        await server.serve_forever()


def mid(a):
    log = open(a.log, "a")
    if a.mode in ("threads", "spawn"):
        mid_threads(a, log)
    else:
        asyncio.run(mid_asyncio(a, log))


def front_conn(a, shapes, first, out):
    n = 0
    with socket.create_connection(("127.0.0.1", a.port)) as s:
        f = s.makefile("rb")
        for i in range(a.per_conn):
            calls, same = shapes[(first + i) % len(shapes)]
            s.sendall(b"%d %d\n" % (calls, same))
            if f.readline() == b"done\n":
                n += 1
        f.close()
    out.append(n)


def front(a):
    shapes = [tuple(int(x) for x in s.split(":")) for s in a.shapes.split(",")]
    out = []
    threads = [threading.Thread(target=front_conn, args=(a, shapes, i, out))
               for i in range(a.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(sum(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["back", "mid", "front"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--back", type=int)
    ap.add_argument("--mode", choices=["threads", "spawn", "asyncio"],
                    default="threads")
    ap.add_argument("--log")
    ap.add_argument("--gather", type=int, default=1)
    ap.add_argument("--ready")
    ap.add_argument("--shapes", default="1:0")
    ap.add_argument("--conns", type=int, default=1)
    ap.add_argument("--per-conn", type=int, default=1)
    a = ap.parse_args()
    {"back": back, "mid": mid, "front": front}[a.role](a)


if __name__ == "__main__":
    sys.exit(main())
