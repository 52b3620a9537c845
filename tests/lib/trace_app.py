#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The three-tier application of the trace accuracy harness
# (tests/integration/trace_accuracy.sh, bench/trace-accuracy.sh): a load
# generator calls a front HTTP service, which calls a middle service
# (directly or through nginx), which calls Redis, PostgreSQL and a back
# HTTP service: none, one, two in sequence, or three in parallel.
#
# Every hop carries a request id in its payload (HTTP headers X-Req-Id and
# X-Parent-Id, the Redis key, an SQL comment), and every process logs each
# request it serves ("req") and each call it makes ("call") as one JSON
# line: the ids, the connection's client and server ports, and the times
# around it. That log is the ground truth tests/lib/trace_accuracy.py
# scores kmond's parent links against; kmond never reads the payload.
#
#   back   --port P --log F
#   middle --port P --log F --svc NAME --mode thread|pool|asyncio
#          --redis P --pg P --back P [--workers N] [--handoff] [--via PROXY]
#          [--fanout inline|spawn]
#   front  --port P --log F --target SVC=[HOST:]PORT ...
#   load   --port P --log F --run LABEL --variant V --to SVC [--host H]
# (servers listen on 127.0.0.1, or --bind ADDR; the thread-mode middle
# calls back at --back-host)
#          --conc C --requests N [--seed S]
#
# Middle-tier modes: thread (a thread per connection reads and serves its
# requests; the front holds one connection per request in flight),
# pool (a selector thread waits for readable connections and hands each
# to one of --workers threads, which reads the request from the socket
# itself and serves it; with --handoff the selector thread reads it and
# a worker serves it), asyncio (one event loop). A parallel fan-out is
# done by the serving thread (send all, then read all: --fanout inline) or
# by one spawned thread per call (--fanout spawn). GET /warm opens the
# PostgreSQL connections (its handshakes are before the measured run).
import argparse
import asyncio
import json
import os
import queue
import random
import select
import selectors
import socket
import threading
import time
import traceback

PG_CONNS = 8
PLANS = {  # request kind -> calls: a list of steps, each step in parallel
    "none": [],
    "redis": [["redis"]],
    "pg": [["pg"]],
    "back": [["back"]],
    "seq": [["redis"], ["back"]],
    "fan": [["redis", "pg", "back"]],
}
KINDS = ["none", "redis", "pg", "back", "seq", "fan", "fan"]


class Log:
    """Ground truth, one JSON line per event, appended by one write each
    (O_APPEND: whole lines from any thread)."""

    def __init__(self, path, svc):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.svc = svc

    def emit(self, **ev):
        ev["svc"] = self.svc
        ev["tid"] = threading.get_native_id()
        os.write(self.fd, (json.dumps(ev) + "\n").encode())


# --- HTTP/1.1, the least of it: headers and a Content-Length body ---

def http_request(path, headers, body_len=0):
    method = "POST" if body_len else "GET"
    lines = [f"{method} {path} HTTP/1.1", "Host: trace", f"Content-Length: {body_len}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def http_response(body):
    return (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n"
            f"Content-Type: text/plain\r\n\r\n{body}").encode()


def parse_head(head):
    lines = head.decode().split("\r\n")
    hdr = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdr[k.strip().lower()] = v.strip()
    return lines[0], hdr


class Conn:
    """A socket and what was read past the last message."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.lport = sock.getsockname()[1]
        self.rport = sock.getpeername()[1]

    def read_msg(self):
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        first, hdr = parse_head(head)
        n = int(hdr.get("content-length", "0"))
        while len(self.buf) < n:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        body, self.buf = self.buf[:n], self.buf[n:]
        return first, hdr, body

    def close(self):
        self.sock.close()


def connect(port, host="127.0.0.1"):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Conn(s)


def serve_tcp(port, handle_conn, bind="127.0.0.1"):
    """Thread per connection."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((bind, port))
    ls.listen(256)
    while True:
        s, _ = ls.accept()
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle_conn, args=(Conn(s),), daemon=True).start()


def serve_requests(conn, handle, body_apart=False):
    """Reads and serves the requests of one connection until it closes;
    body_apart: every other answer's body a moment after its head, as
    Python's http.server writes them (two sends)."""
    n = 0
    try:
        while True:
            msg = conn.read_msg()
            if msg is None:
                break
            answer = http_response(handle(conn, msg))
            n += 1
            if body_apart and n % 2:
                head, sep, body = answer.partition(b"\r\n\r\n")
                conn.sock.sendall(head + sep)
                time.sleep(BODY_APART_GAP)
                answer = body
            conn.sock.sendall(answer)
    except OSError:
        pass
    except Exception:  # a broken harness: say why, and hang up
        traceback.print_exc()
    conn.close()


# --- back: answers after 0.5 .. 2 ms ---

def run_back(a):
    log = Log(a.log, "back")

    def handle(conn, msg):
        t0 = time.time_ns()
        hdr = msg[1]
        time.sleep(random.uniform(0.0005, 0.002))
        body = "back " + hdr["x-req-id"]
        log.emit(ev="req", rid=hdr["x-req-id"], parent=hdr.get("x-parent-id"),
                 cport=conn.rport, sport=conn.lport, t0=t0, t1=time.time_ns())
        return body

    serve_tcp(a.port, lambda c: serve_requests(c, handle), a.bind)


# --- middle, thread and pool modes: blocking calls ---

class SyncCalls:
    """The downstream calls of the thread modes: start() sends, finish()
    reads the answer, so a fan-out can send all before reading any."""

    def __init__(self, a, log):
        self.a, self.log = a, log
        self.local = threading.local()
        self.pg = queue.Queue()
        self.warm_lock = threading.Lock()

    def warm(self):
        with self.warm_lock:
            while self.pg.qsize() < PG_CONNS:
                self.pg.put(self.pg_connect())

    def pg_connect(self):
        import psycopg2  # Debian python3-psycopg2
        c = psycopg2.connect(host="127.0.0.1", port=self.a.pg, user="postgres",
                             dbname="postgres", async_=1)
        pg_wait(c)
        s = socket.socket(fileno=os.dup(c.fileno()))
        ports = (s.getsockname()[1], s.getpeername()[1])
        s.close()
        return c, ports

    def conns(self):
        """This thread's Redis and back connections."""
        if not hasattr(self.local, "redis"):
            import redis  # Debian python3-redis
            r = redis.Connection(host="127.0.0.1", port=self.a.redis)
            r.connect()
            self.local.redis = r, (r._sock.getsockname()[1], self.a.redis)
            b = connect(self.a.back, self.a.back_host)
            self.local.back = b, (b.lport, b.rport)
        return {"redis": self.local.redis, "back": self.local.back}

    def start(self, what, cp, rid, parent):
        conn, ports = cp
        t0 = time.time_ns()
        cur = None
        if what == "redis":
            conn.send_command("SET", f"rid:{rid}", parent, "PX", 60000)
        elif what == "pg":
            cur = conn.cursor()  # it must live until the answer is read
            cur.execute(f"/* rid={rid} parent={parent} */ SELECT 1")
        else:
            conn.sock.sendall(http_request("/b", {"X-Req-Id": rid, "X-Parent-Id": parent}))
        return what, conn, cur, rid, parent, ports, t0

    def finish(self, pending):
        what, conn, cur, rid, parent, ports, t0 = pending
        if what == "redis":
            conn.read_response()
        elif what == "pg":
            pg_wait(conn)
            cur.fetchall()
        elif conn.read_msg() is None:
            raise OSError("back closed")
        self.log.emit(ev="call", to=what, rid=rid, parent=parent, cport=ports[0],
                      sport=ports[1], t0=t0, t1=time.time_ns())

    def serve(self, rid, kind):
        own = self.conns()
        for step in PLANS[kind]:
            conns = [own[w] if w != "pg" else self.pg.get() for w in step]
            calls = [(w, c, f"{rid}.{w}") for w, c in zip(step, conns)]
            if len(step) == 1 or self.a.fanout == "inline":
                pend = [self.start(w, c, r, rid) for w, c, r in calls]
                for p in pend:
                    self.finish(p)
            else:
                ts = [threading.Thread(target=lambda w=w, c=c, r=r:
                                       self.finish(self.start(w, c, r, rid)))
                      for w, c, r in calls]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            for w, c in zip(step, conns):
                if w == "pg":
                    self.pg.put(c)


def pg_wait(c):
    import psycopg2.extensions as ext
    while True:
        state = c.poll()
        if state == ext.POLL_OK:
            return
        if state == ext.POLL_READ:
            select.select([c.fileno()], [], [])
        elif state == ext.POLL_WRITE:
            select.select([], [c.fileno()], [])


def middle_handler(a, log, calls):
    def handle(conn, msg):
        first, hdr, _ = msg
        if first.split()[1] == "/warm":
            calls.warm()
            return "warm"
        t0 = time.time_ns()
        rid = hdr["x-req-id"]
        calls.serve(rid, hdr.get("x-kind", "none"))
        ev = dict(ev="req", rid=rid, parent=hdr.get("x-parent-id"), cport=conn.rport,
                  sport=conn.lport, t0=t0, t1=time.time_ns())
        if a.via:
            ev["via"] = a.via
        log.emit(**ev)
        return "middle " + rid
    return handle


def run_middle_pool(a, handle):
    """A selector thread waits for requests; a worker reads and serves."""
    ready = queue.Queue()
    back_r, back_w = os.pipe()
    returned = queue.Queue()
    sel = selectors.DefaultSelector()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(256)
    sel.register(ls, selectors.EVENT_READ, "listen")
    sel.register(back_r, selectors.EVENT_READ, "returned")

    def worker():
        while True:
            conn, msg = ready.get()
            try:
                if msg is None:
                    msg = conn.read_msg()  # the worker reads its own socket
                if msg is None:
                    conn.close()
                    continue
                conn.sock.sendall(http_response(handle(conn, msg)))
            except Exception as e:
                if not isinstance(e, OSError):
                    traceback.print_exc()
                conn.close()
                continue
            returned.put(conn)
            os.write(back_w, b"x")

    for _ in range(a.workers):
        threading.Thread(target=worker, daemon=True).start()
    while True:
        for key, _ in sel.select():
            if key.data == "listen":
                s, _ = ls.accept()
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(s, selectors.EVENT_READ, Conn(s))
            elif key.data == "returned":
                os.read(back_r, 4096)
                while not returned.empty():
                    c = returned.get()
                    if c.buf:  # a request already read: hand it on again
                        ready.put((c, None))
                    else:
                        sel.register(c.sock, selectors.EVENT_READ, c)
            else:
                sel.unregister(key.fileobj)
                msg = None
                if a.handoff:  # this thread reads, a worker serves
                    msg = key.data.read_msg()
                    if msg is None:
                        key.data.close()
                        continue
                ready.put((key.data, msg))


# --- middle, asyncio mode ---

async def run_middle_asyncio(a, log):
    import asyncpg  # Debian python3-asyncpg
    import redis.asyncio as aredis
    pools = {w: asyncio.Queue() for w in ("redis", "pg", "back")}

    async def take(what):
        if not pools[what].empty() or what == "pg":
            return await pools[what].get()
        if what == "redis":
            c = aredis.Connection(host="127.0.0.1", port=a.redis)
            await c.connect()
            return c, (c._writer.get_extra_info("sockname")[1], a.redis)
        r, w = await asyncio.open_connection("127.0.0.1", a.back)
        return (r, w), (w.get_extra_info("sockname")[1], a.back)

    async def call(what, rid, parent):
        cp = await take(what)
        c, ports = cp
        t0 = time.time_ns()
        if what == "redis":
            await c.send_command("SET", f"rid:{rid}", parent, "PX", 60000)
            await c.read_response()
        elif what == "pg":
            await c.execute(f"/* rid={rid} parent={parent} */ SELECT 1")
        else:
            r, w = c
            w.write(http_request("/b", {"X-Req-Id": rid, "X-Parent-Id": parent}))
            if await read_async(r) is None:
                raise OSError("back closed")
        log.emit(ev="call", to=what, rid=rid, parent=parent, cport=ports[0],
                 sport=ports[1], t0=t0, t1=time.time_ns())
        pools[what].put_nowait(cp)

    async def handle_conn(r, w):
        try:
            await serve_conn(r, w)
        except ConnectionError:
            pass
        except Exception:  # a broken harness: say why, and hang up
            traceback.print_exc()
        w.close()

    async def serve_conn(r, w):
        lport = w.get_extra_info("sockname")[1]
        rport = w.get_extra_info("peername")[1]
        while True:
            msg = await read_async(r)
            if msg is None:
                break
            first, hdr, _ = msg
            if first.split()[1] == "/warm":
                while pools["pg"].qsize() < PG_CONNS:
                    pg = await asyncpg.connect(host="127.0.0.1", port=a.pg,
                                               user="postgres", database="postgres")
                    pools["pg"].put_nowait(
                        (pg, (pg._transport.get_extra_info("sockname")[1], a.pg)))
                w.write(http_response("warm"))
                continue
            t0 = time.time_ns()
            rid = hdr["x-req-id"]
            for step in PLANS[hdr.get("x-kind", "none")]:
                await asyncio.gather(*(call(x, f"{rid}.{x}", rid) for x in step))
            log.emit(ev="req", rid=rid, parent=hdr.get("x-parent-id"), cport=rport,
                     sport=lport, t0=t0, t1=time.time_ns())
            w.write(http_response("middle " + rid))
            await w.drain()

    server = await asyncio.start_server(handle_conn, "127.0.0.1", a.port,
                                        reuse_address=True, backlog=256)
    async with server:
        await server.serve_forever()


async def read_async(r):
    try:
        head = await r.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    first, hdr = parse_head(head[:-4])
    body = await r.readexactly(int(hdr.get("content-length", "0")))
    return first, hdr, body


def run_middle(a):
    log = Log(a.log, a.svc)
    if a.mode == "asyncio":
        asyncio.run(run_middle_asyncio(a, log))
        return
    handle = middle_handler(a, log, SyncCalls(a, log))
    if a.mode == "thread":
        serve_tcp(a.port, lambda c: serve_requests(c, handle, a.body_apart), a.bind)
    else:
        run_middle_pool(a, handle)


# Every other call the front makes to nginx and asyncio: its body
# apart (docs/design/paths.md, Limits).
BODY_APART_TO = ("nginx", "middle-asyncio")
BODY_APART_LEN = 64
BODY_APART_GAP = 0.002


# --- front: thread per connection, one connection per target and thread ---

def run_front(a):
    log = Log(a.log, "front")
    targets = dict(t.split("=") for t in a.target)  # SVC=[HOST:]PORT

    def handle_conn(conn):
        down = {}

        def handle(_, msg):
            first, hdr, _ = msg
            t0 = time.time_ns()
            rid = hdr["x-req-id"]
            to = first.split()[1].split("/")[2]  # GET /t/SVC
            if to not in down:
                host, _, port = targets[to].rpartition(":")
                down[to] = connect(int(port), host or "127.0.0.1")
            d, child = down[to], rid + ".m"
            head = {"X-Req-Id": child, "X-Parent-Id": rid, "X-Kind": hdr["x-kind"]}
            ct0 = time.time_ns()
            if to in BODY_APART_TO and int(rid.rsplit(":", 1)[1]) % 2:
                send_body_apart(d, "/m", head)
            else:
                d.sock.sendall(http_request("/m", head))
            if d.read_msg() is None:
                raise OSError(f"{to} closed")
            ct1 = time.time_ns()
            log.emit(ev="call", to=to, rid=child, parent=rid, cport=d.lport,
                     sport=d.rport, t0=ct0, t1=ct1)
            log.emit(ev="req", rid=rid, parent=None, cport=conn.rport, sport=conn.lport,
                     t0=t0, t1=time.time_ns())
            return "front " + rid

        serve_requests(conn, handle)
        for d in down.values():
            d.close()

    serve_tcp(a.port, handle_conn, a.bind)


def send_body_apart(d, path, head):
    """A POST whose body follows its head a moment later, as Python's
    http.client sends one (two sends): the server may read the head
    alone and wait for the body."""
    body = b"b" * BODY_APART_LEN
    d.sock.sendall(http_request(path, head, len(body)))
    time.sleep(BODY_APART_GAP)
    d.sock.sendall(body)


# --- load: C threads, one connection each ---

def run_load(a):
    log = Log(a.log, "load")
    rng = random.Random(a.seed)
    jobs = queue.Queue()
    for i in range(a.requests):
        jobs.put((f"{a.run}:{i}", rng.choice(KINDS)))
    errors = []

    def client():
        try:
            c = connect(a.port, a.host)
            while True:
                try:
                    rid, kind = jobs.get_nowait()
                except queue.Empty:
                    break
                t0 = time.time_ns()
                c.sock.sendall(http_request(f"/t/{a.to}",
                                            {"X-Req-Id": rid, "X-Kind": kind}))
                if c.read_msg() is None:
                    raise OSError("front closed")
                log.emit(ev="call", to="front", rid=rid, parent=None, kind=kind,
                         cport=c.lport, sport=c.rport, t0=t0, t1=time.time_ns())
            c.close()
        except OSError as e:
            errors.append(str(e))

    t0 = time.time_ns()
    ts = [threading.Thread(target=client) for _ in range(a.conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    log.emit(ev="run", run=a.run, variant=a.variant, conc=a.conc,
             requests=a.requests, t0=t0, t1=time.time_ns())
    if errors:
        raise SystemExit(f"load: {len(errors)} clients failed: {errors[0]}")
    print(a.requests)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["back", "middle", "front", "load"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--svc", default="middle")
    p.add_argument("--mode", choices=["thread", "pool", "asyncio"], default="thread")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--handoff", action="store_true",
                   help="pool: the selector thread reads each request")
    p.add_argument("--fanout", choices=["inline", "spawn"], default="inline")
    p.add_argument("--via")
    p.add_argument("--body-apart", action="store_true",
                   help="middle (thread): every other answer's body apart from its head")
    p.add_argument("--redis", type=int)
    p.add_argument("--pg", type=int)
    p.add_argument("--back", type=int)
    p.add_argument("--back-host", default="127.0.0.1")
    p.add_argument("--bind", default="127.0.0.1", help="servers: the address")
    p.add_argument("--host", default="127.0.0.1", help="load: the front's address")
    p.add_argument("--target", action="append", default=[])
    p.add_argument("--run")
    p.add_argument("--variant")
    p.add_argument("--conc", type=int, default=1)
    p.add_argument("--requests", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--to", help="load: the front's target service")
    a = p.parse_args()
    if a.role == "load":
        run_load(a)
        return
    {"back": run_back, "middle": run_middle, "front": run_front}[a.role](a)


if __name__ == "__main__":
    main()
