# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What every Python tier of the demo shop shares: an HTTP/1.1 server
with a thread per connection (the standard library's
ThreadingHTTPServer), pools of connections to the other tiers and to the
data stores (HTTP, Redis, memcached, PostgreSQL), parallel calls from
threads made for them, and the fault switch.

Peers come from the environment, as a Kubernetes pod gets its services:
PEERS="catalogue=10.77.0.12:8080,redis=10.77.0.21:6379,...".

The fault switch: POST /fault {"delay_ms": N} makes this tier wait N ms
in each request, one request at a time (a slow lock-holding step, such
as a contended database row): requests queue behind it, so the tier
becomes the slowest of the graph and its waits dominate its off-CPU
time. FAULT_MS in the environment sets it at start."""
import http.client
import http.server
import json
import os
import queue
import socket
import sys
import threading
import time
import traceback

PEERS = dict(p.split("=", 1) for p in os.environ.get("PEERS", "").split(",") if p)


def peer(name):
    host, _, port = PEERS[name].rpartition(":")
    return host, int(port)


class CallError(Exception):
    """A peer could not be reached or answered nonsense."""


class Pool:
    """Open connections to one peer, reused by whichever thread calls
    next (kmond links a call to the request its thread serves, not to
    the connection)."""

    def __init__(self, connect):
        self.connect = connect
        self.idle = queue.LifoQueue()

    def call(self, use):
        try:
            conn = self.idle.get_nowait()
        except queue.Empty:
            conn = self.connect()
        try:
            result = use(conn)
        except Exception:
            conn.close()
            raise
        self.idle.put(conn)
        return result


_http_pools = {}
_http_lock = threading.Lock()


def http_call(name, method, path, body=None):
    """One HTTP request to peer NAME: (status, decoded JSON body)."""
    with _http_lock:
        pool = _http_pools.get(name)
        if pool is None:
            host, port = peer(name)
            pool = Pool(lambda: http.client.HTTPConnection(host, port, timeout=10))
            _http_pools[name] = pool

    def use(conn):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw) if raw else None

    try:
        return _http_pools[name].call(use)
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise CallError(f"{name} {method} {path}: {e}") from e


def ok(name, method, path, body=None):
    """The answer of a call that must succeed: a peer's 4xx or 5xx
    fails this request too (502)."""
    status, out = http_call(name, method, path, body)
    if status >= 400:
        raise CallError(f"{name} {method} {path}: {status}")
    return out


def parallel(*calls):
    """Runs each call (a function of no argument) in a thread of its
    own, as a fan-out does; returns their results in order. A thread per
    call, made for this request: kmond links its calls to the request
    (link "spawn"); a shared executor's threads would not be."""
    results = [None] * len(calls)

    def run(i, fn):
        try:
            results[i] = fn()
        except Exception as e:  # handed to the caller below
            results[i] = e

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        if isinstance(r, Exception):
            raise r
    return results


class Resp:
    """A socket and what was read past the last reply (Redis,
    memcached)."""

    def __init__(self, addr):
        self.sock = socket.create_connection(addr, timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def exactly(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise CallError("connection closed")
        self.buf += data

    def close(self):
        self.sock.close()


class Redis:
    """The least of RESP2: commands as arrays of bulk strings, replies
    of every type."""

    def __init__(self, name="redis"):
        self.pool = Pool(lambda: Resp(peer(name)))

    def __call__(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))

        def use(conn):
            conn.sock.sendall(b"".join(out))
            return self._reply(conn)

        try:
            return self.pool.call(use)
        except OSError as e:
            raise CallError(f"redis: {e}") from e

    def _reply(self, conn):
        line = conn.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise CallError("redis: " + rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else conn.exactly(n).decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply(conn) for _ in range(n)]
        raise CallError(f"redis: unexpected reply {line!r}")


class Memcached:
    """memcached's text protocol: get and set."""

    def __init__(self, name="memcached"):
        self.pool = Pool(lambda: Resp(peer(name)))

    def get(self, key):
        def use(conn):
            conn.sock.sendall(b"get %s\r\n" % key.encode())
            line = conn.line()
            if line == b"END":
                return None
            n = int(line.split()[3])
            value = conn.exactly(n)
            conn.line()  # END
            return json.loads(value)

        return self._call(use)

    def set(self, key, value, ttl):
        data = json.dumps(value).encode()

        def use(conn):
            conn.sock.sendall(b"set %s 0 %d %d\r\n%s\r\n" % (key.encode(), ttl, len(data), data))
            return conn.line()

        return self._call(use)

    def _call(self, use):
        try:
            return self.pool.call(use)
        except OSError as e:
            raise CallError(f"memcached: {e}") from e


class Postgres:
    """Debian's psycopg2, a pool of connections in autocommit."""

    def __init__(self, name="postgres"):
        import psycopg2  # Debian python3-psycopg2

        host, port = peer(name)

        def connect():
            c = psycopg2.connect(host=host, port=port, user="postgres", dbname="shop")
            c.autocommit = True
            return c

        self.pool = Pool(connect)

    def query(self, sql, args=()):
        def use(conn):
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else None

        return self.pool.call(use)


class Fault:
    """The fault switch: a delay served one request at a time."""

    def __init__(self):
        self.delay = float(os.environ.get("FAULT_MS", "0")) / 1000
        self.lock = threading.Lock()

    def apply(self):
        if self.delay > 0:
            with self.lock:
                time.sleep(self.delay)


FAULT = Fault()


def serve(routes, port=8080):
    """Serves ROUTES: {(method, first path segment): handler}; a handler
    takes (path segments, query dict, JSON body) and returns (status,
    JSON-able body). /fault and /health are every tier's."""

    def fault(parts, query, body):
        FAULT.delay = float(body.get("delay_ms", 0)) / 1000
        return 200, {"delay_ms": FAULT.delay * 1000}

    routes = dict(routes)
    routes[("POST", "fault")] = fault
    routes[("GET", "health")] = lambda parts, query, body: (200, {"ok": True})

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_any(self):
            path, _, qs = self.path.partition("?")
            parts = [p for p in path.split("/") if p]
            query = dict(kv.partition("=")[::2] for kv in qs.split("&") if kv)
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else {}
            handler = routes.get((self.command, parts[0] if parts else ""))
            if handler is None:
                status, out = 404, {"error": "no such route"}
            else:
                if parts and parts[0] not in ("fault", "health"):
                    FAULT.apply()
                try:
                    status, out = handler(parts[1:], query, body)
                except CallError as e:
                    status, out = 502, {"error": str(e)}
                except Exception as e:  # a bug or a store's error: say it, answer 500
                    traceback.print_exc()
                    status, out = 500, {"error": repr(e)}
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = handle_any

        def log_message(self, *args):
            pass  # the load generator keeps the log of every request

    server = http.server.ThreadingHTTPServer(("0.0.0.0", port), Handler)
    server.daemon_threads = True
    print(f"{os.path.basename(sys.argv[0])}: serving on :{port}", flush=True)
    server.serve_forever()
