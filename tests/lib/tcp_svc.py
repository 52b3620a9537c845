#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A loopback service with known service times, and its client, for the
tcp collector's tests.

A request is one line of exactly 100 + MS bytes, "MS RESP ...\\n"; the
server sleeps MS milliseconds (after calling its downstream service, if
any, once per request), then answers exactly RESP bytes. So a record's
req_bytes - 100 is the service time it must show.

tcp_svc.py server --port P [--v6] [--bind ADDR] [--downstream [HOST:]PORT]
                  [--ready FILE] [--log FILE] [--spans FILE] [--cut N]
    one thread per connection; listens on 127.0.0.1, --bind ADDR, or
    with --v6 on [::] (dual stack); the downstream host is 127.0.0.1
    unless given;
    --log: a line "CLIENT_PORT MS NS BEFORE_NS" per request, NS the time
    from having read the request to having sent the answer, as the
    server measures it (a loaded machine may sleep longer than asked),
    BEFORE_NS the same up to just before the answer is sent: its caller
    waits at least that long (on loopback it may have the answer before
    the server's send returns);
    --spans: a line "START END" per request, monotonic ns, as the
    server saw it (read the request, about to send the answer: kmond's
    request ends when that send begins)
    --cut N: answer only the first N bytes, then close the connection
tcp_svc.py client --port P [--host H] [--mode persistent|short|pipeline|cut]
                  [--ms 5,20,50] [--repeat N] [--wait FILE]
                  [--conns N] [--think MS] [--log FILE]
    persistent: one connection for every request; short: one each;
    pipeline: one connection, every request sent before the first
    answer is read; cut: one connection each, read until the server
    closes it (a --cut server), counted when it did.
    --conns: N such clients at once (the count printed is their sum);
    --think: a pause of MS milliseconds after each answer.
    --log (persistent and short): a line "LOCAL_PORT MS NS" per request
    (appended), NS the time from just before the request is sent to
    having read the whole answer: it encloses the server's side of the
    request whatever the scheduler does, so it bounds kmond's latency.
    --wait: connect, create FILE.ready, then wait for FILE to exist
    before the first request (a connection older than kmond).
    Prints the number of requests answered."""
import argparse
import os
import socket
import sys
import threading
import time

REQ_BASE = 100
RESP_BASE = 1000
DOWNSTREAM_MS = 1


def request(ms, resp):
    head = b"%d %d " % (ms, resp)
    return head + b"x" * (REQ_BASE + ms - len(head) - 1) + b"\n"


def recv_exact(sock, n):
    got = 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError("closed early")
        got += len(chunk)


def read_to_eof(sock):
    got = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += len(chunk)


def call(sock, ms):
    resp = RESP_BASE + ms
    sock.sendall(request(ms, resp))
    recv_exact(sock, resp)


def timed_call(sock, ms, log):
    start = time.monotonic_ns()
    call(sock, ms)
    if log:
        log.write(f"{sock.getsockname()[1]} {ms} "
                  f"{time.monotonic_ns() - start}\n")
        log.flush()


LOG_LOCK = threading.Lock()


def serve_conn(conn, downstream, log, cut, spans):
    down = None
    peer_port = conn.getpeername()[1]
    with conn:
        f = conn.makefile("rb")
        while True:
            line = f.readline()
            if not line:
                break
            start = time.monotonic_ns()
            ms, resp = (int(x) for x in line.split()[:2])
            if downstream:
                if down is None:
                    host, _, port = downstream.rpartition(":")
                    down = socket.create_connection((host or "127.0.0.1",
                                                     int(port)))
                call(down, DOWNSTREAM_MS)
            time.sleep(ms / 1000)
            before = time.monotonic_ns() - start
            if cut is not None:
                conn.sendall(b"y" * cut)
                f.close()  # else the socket outlives close()
                break
            end = time.monotonic_ns()
            conn.sendall(b"y" * (resp - 1) + b"\n")
            if spans:
                with LOG_LOCK:
                    spans.write(f"{start} {end}\n")
                    spans.flush()
            if log:
                with LOG_LOCK:
                    log.write(f"{peer_port} {ms} "
                              f"{time.monotonic_ns() - start} {before}\n")
                    log.flush()
    if down:
        down.close()


def server(a):
    if a.v6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        addr = ("::", a.port)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = (a.bind, a.port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr)
    s.listen(64)
    log = open(a.log, "a") if a.log else None
    spans = open(a.spans, "a") if a.spans else None
    if a.ready:
        open(a.ready, "w").close()
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve_conn,
                         args=(conn, a.downstream, log, a.cut, spans),
                         daemon=True).start()


def client(a):
    if a.conns > 1:
        counts = []
        one = argparse.Namespace(**{**vars(a), "conns": 1, "out": counts})
        threads = [threading.Thread(target=client, args=(one,))
                   for _ in range(a.conns)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(sum(counts))
        return
    times = [int(x) for x in a.ms.split(",")] * a.repeat
    family = socket.AF_INET6 if ":" in a.host else socket.AF_INET
    n = 0
    sock = None
    if a.mode == "pipeline":
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.connect((a.host, a.port))
            s.sendall(b"".join(request(ms, RESP_BASE + ms) for ms in times))
            recv_exact(s, sum(RESP_BASE + ms for ms in times))
        print(len(times))
        return
    if a.mode == "cut":
        for ms in times:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.connect((a.host, a.port))
                s.sendall(request(ms, RESP_BASE + ms))
                if read_to_eof(s) < RESP_BASE + ms:
                    n += 1
        print(n)
        return
    if a.mode == "persistent":
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.connect((a.host, a.port))
        if a.wait:
            open(a.wait + ".ready", "w").close()
            while not os.path.exists(a.wait):
                time.sleep(0.05)
    log = open(a.log, "a") if a.log else None
    for ms in times:
        if a.mode == "short":
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.connect((a.host, a.port))
                timed_call(s, ms, log)
        else:
            timed_call(sock, ms, log)
        n += 1
        if a.think:
            time.sleep(a.think / 1000)
    if sock:
        sock.close()
    if a.out is not None:
        a.out.append(n)  # one of --conns clients (list.append is atomic)
    else:
        print(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["server", "client"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--v6", action="store_true")
    ap.add_argument("--downstream")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--ready")
    ap.add_argument("--log")
    ap.add_argument("--spans")
    ap.add_argument("--mode", default="persistent",
                    choices=["persistent", "short", "pipeline", "cut"])
    ap.add_argument("--ms", default="5,20,50")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--wait")
    ap.add_argument("--cut", type=int)
    ap.add_argument("--conns", type=int, default=1)
    ap.add_argument("--think", type=int, default=0)
    a = ap.parse_args()
    a.out = None
    try:
        server(a) if a.role == "server" else client(a)
    except KeyboardInterrupt:
        sys.exit(0)


main()
