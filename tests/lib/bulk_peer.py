#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A server and its client over one loopback connection through small
socket buffers, for the tests of where a send begins: a large request or
answer blocks its sender's send until the other end has read most of it.

bulk_peer.py server PORT READY [options]
    listens on 127.0.0.1:PORT, creates READY, serves one connection:
    per call, reads the request (in pieces of --buf bytes, --read-pause
    seconds after each), then answers in one send
bulk_peer.py client PORT GO [options]
    waits for the file GO, connects; per call, sends the request in one
    send, waits --reply-pause seconds, reads the answer
    --hold PATH: once connected, waits for the file PATH before the
    first call (a connection older than what the test starts then)
options (both ends alike): --calls N (1), --request BYTES (64),
    --answer BYTES (2), --buf BYTES (socket buffers, 64 KiB),
    --read-pause S (0), --reply-pause S (0)
Exits 1 on a short request or answer."""
import argparse
import os
import socket
import sys
import time


def small(s, buf):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buf)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buf)


def read_exactly(c, n, piece, pause):
    got = 0
    while got < n:
        k = len(c.recv(min(piece, n - got)))
        if not k:
            sys.exit("short: %d of %d bytes" % (got, n))
        got += k
        if pause:
            time.sleep(pause)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=("server", "client"))
    ap.add_argument("port", type=int)
    ap.add_argument("file")
    ap.add_argument("--calls", type=int, default=1)
    ap.add_argument("--request", type=int, default=64)
    ap.add_argument("--answer", type=int, default=2)
    ap.add_argument("--buf", type=int, default=64 << 10)
    ap.add_argument("--read-pause", type=float, default=0)
    ap.add_argument("--reply-pause", type=float, default=0)
    ap.add_argument("--hold")
    a = ap.parse_args()
    # made before the clock starts: 32 MiB take a slow guest 0.2 s
    request, answer = b"r" * a.request, b"a" * a.answer

    if a.role == "server":
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        small(ls, a.buf)
        ls.bind(("127.0.0.1", a.port))
        ls.listen(1)
        open(a.file, "w").close()
        c, _ = ls.accept()
        for _ in range(a.calls):
            read_exactly(c, a.request, a.buf, a.read_pause)
            c.sendall(answer)
        c.recv(1)  # the client's close
        return
    while not os.path.exists(a.file):
        time.sleep(0.05)
    c = socket.socket()
    small(c, a.buf)
    c.connect(("127.0.0.1", a.port))
    while a.hold and not os.path.exists(a.hold):
        time.sleep(0.05)
    for _ in range(a.calls):
        c.sendall(request)
        time.sleep(a.reply_pause)
        read_exactly(c, a.answer, 1 << 20, 0)
    c.close()


if __name__ == "__main__":
    main()
