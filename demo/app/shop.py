# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What every Python tier of the demo shop shares: an HTTP/1.1 server
with a thread per connection (the standard library's
ThreadingHTTPServer), pools of connections to the other tiers and to the
data stores (HTTP, Redis, memcached, PostgreSQL, Kafka), parallel calls
from threads made for them, the call tree's spans and the fault
switch.

Peers come from the environment, as a Kubernetes pod gets its services:
PEERS="catalogue=10.77.0.12:8080,redis=10.77.0.21:6379,...".

The call tree, as ground truth for kmon-trace: a request carries the
id of its user request (X-Demo-Trace, set by the load generator) and of
the request that made the call (X-Demo-Parent); each tier writes, on
stdout, a line "SPAN {json}" for each request it served (its own span
id, its parent's, the caller's address and port) and for each call it
made to a data store (the store logs nothing: the caller writes the
store's span, with its own end's address and port). The spans' ids are
the application's own, not kmond's: the test joins the two by address,
port and time.

The fault switch: POST /fault {"delay_ms": N} makes this tier wait N ms
in each request, one request at a time (a slow lock-holding step, such
as a contended database row): requests queue behind it, so the tier
becomes the slowest of the graph and its waits dominate its off-CPU
time. FAULT_MS in the environment sets it at start."""
import http.client
import http.server
import itertools
import json
import os
import queue
import socket
import struct
import sys
import threading
import time
import traceback

PEERS = dict(p.split("=", 1) for p in os.environ.get("PEERS", "").split(",") if p)
TIER = os.environ.get("TIER", os.path.basename(sys.argv[0]).split(".")[0])

# the request this thread serves: trace and span ids (parallel() hands
# them to the threads it makes)
context = threading.local()
_log_lock = threading.Lock()


def log_span(**span):
    line = "SPAN " + json.dumps(span) + "\n"
    with _log_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def store_call(store, local, call):
    """CALL() on a connection to STORE whose own end is LOCAL (address,
    port), written as a span of the request this thread serves."""
    start = time.time()
    try:
        return call()
    finally:
        log_span(trace=getattr(context, "trace", ""), span=os.urandom(8).hex(),
                 parent=getattr(context, "span", ""), tier=store, caller=TIER,
                 peer="%s:%d" % local[:2], start=start, end=time.time())


def span_headers():
    return {"X-Demo-Trace": getattr(context, "trace", ""),
            "X-Demo-Parent": getattr(context, "span", "")}


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

    def call_store(self, store, use):
        """call(USE), written as a call to STORE (store_call)."""
        return self.call(lambda conn: store_call(store, conn.local, lambda: use(conn)))


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
        headers = span_headers()
        if data:
            headers["Content-Type"] = "application/json"
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
    trace, span = getattr(context, "trace", ""), getattr(context, "span", "")

    def run(i, fn):
        context.trace, context.span = trace, span
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
        self.local = self.sock.getsockname()
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def exactly(self, n):
        """N bytes and the line end after them."""
        return self.exactly_raw(n + 2)[:n]

    def exactly_raw(self, n):
        """N bytes, no line end after them (a binary protocol)."""
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
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
        self.name = name
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
            return self.pool.call_store(self.name, use)
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
        self.name = name
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
            return self.pool.call_store(self.name, use)
        except OSError as e:
            raise CallError(f"memcached: {e}") from e


def _crc32c_table():
    table = []
    for n in range(256):
        for _ in range(8):
            n = (n >> 1) ^ 0x82F63B78 if n & 1 else n >> 1
        table.append(n)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    """Castagnoli's CRC, which a Kafka record batch carries."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def varint(n):
    """Kafka's signed varint (zigzag, then 7 bits a byte)."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class Kafka:
    """The least of a Kafka producer: Produce v3 (a record batch of
    format 2, one record, acks=1) to partition 0 of a topic on a broker
    that leads it (the demo's broker is one), answered before the call
    returns, so the request that publishes waits for the broker."""

    def __init__(self, name="kafka", client_id=None):
        self.name = name
        self.pool = Pool(lambda: Resp(peer(name)))
        self.client_id = (client_id or TIER).encode()
        self.correlation = itertools.count(1)

    def publish(self, topic, key, value):
        key, value, topic = key.encode(), json.dumps(value).encode(), topic.encode()
        now = int(time.time() * 1000)
        record = (b"\0" + varint(0) + varint(0) + varint(len(key)) + key +
                  varint(len(value)) + value + varint(0))
        record = varint(len(record)) + record
        after_crc = (struct.pack(">hiqqqhii", 0, 0, now, now, -1, -1, -1, 1) + record)
        after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
        batch = struct.pack(">qi", 0, len(after_length)) + after_length
        correlation = next(self.correlation) & 0x7FFFFFFF
        body = (struct.pack(">hhih", 0, 3, correlation, len(self.client_id)) + self.client_id +
                struct.pack(">hhii", -1, 1, 5000, 1) + struct.pack(">h", len(topic)) + topic +
                struct.pack(">iii", 1, 0, len(batch)) + batch)

        def use(conn):
            conn.sock.sendall(struct.pack(">i", len(body)) + body)
            size = struct.unpack(">i", conn.exactly_raw(4))[0]
            answer = conn.exactly_raw(size)
            # correlation id, 1 topic (its name), 1 partition: its error
            got, = struct.unpack(">i", answer[:4])
            n = struct.unpack(">h", answer[8:10])[0]
            error, = struct.unpack(">h", answer[10 + n + 8:10 + n + 10])
            if got != correlation or error:
                raise CallError(f"kafka: correlation {got} of {correlation}, error {error}")
            return error

        try:
            return self.pool.call_store(self.name, use)
        except (OSError, struct.error) as e:
            raise CallError(f"kafka: {e}") from e


class Postgres:
    """Debian's psycopg2, a pool of connections in autocommit."""

    def __init__(self, name="postgres"):
        import psycopg2  # Debian python3-psycopg2
        import psycopg2.extensions

        host, port = peer(name)

        class Connection(psycopg2.extensions.connection):
            """Keeps its own end's address (a store call's span)."""

        def connect():
            c = psycopg2.connect(host=host, port=port, user="postgres", dbname="shop",
                                 connection_factory=Connection)
            c.autocommit = True
            with socket.socket(fileno=os.dup(c.fileno())) as s:
                c.local = s.getsockname()
            return c

        self.name = name
        self.pool = Pool(connect)

    def query(self, sql, args=()):
        def use(conn):
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else None

        return self.pool.call_store(self.name, use)


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
            start = time.time()
            context.trace = self.headers.get("X-Demo-Trace", "")
            context.span = os.urandom(8).hex()
            path, _, qs = self.path.partition("?")
            parts = [p for p in path.split("/") if p]
            query = dict(kv.partition("=")[::2] for kv in qs.split("&") if kv)
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else {}
            handler = routes.get((self.command, parts[0] if parts else ""))
            served = not parts or parts[0] not in ("fault", "health")  # the shop's work
            if handler is None:
                status, out = 404, {"error": "no such route"}
            else:
                if served:
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
            if served:
                log_span(trace=context.trace, span=context.span,
                         parent=self.headers.get("X-Demo-Parent", ""), tier=TIER,
                         peer="%s:%d" % self.client_address[:2], method=self.command,
                         path=path, status=status, start=start, end=time.time())

        do_GET = do_POST = do_DELETE = handle_any

        def log_message(self, *args):
            pass  # the load generator keeps the log of every request

    server = http.server.ThreadingHTTPServer(("0.0.0.0", port), Handler)
    server.daemon_threads = True
    print(f"{os.path.basename(sys.argv[0])}: serving on :{port}", flush=True)
    server.serve_forever()
