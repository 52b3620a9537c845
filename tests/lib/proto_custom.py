#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A protocol kmond does not know, for the protocol identification test.

Length-prefixed binary: u32 length (of what follows), u16 type, u16 flags,
u32 request id, then payload; the reply has the same header layout with
the request's id. Also clients that misbehave: random bytes, nothing.
    proto_custom.py server PORT --ready FILE
    proto_custom.py client PORT N [--seed S]
The client makes N connections: most speak the protocol (1-3 requests,
sometimes split over two writes), one in ten sends random bytes, one in
twenty sends nothing and closes.
"""
import os
import random
import socket
import socketserver
import struct
import sys
import time


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            return None
        buf += b
    return buf


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        while True:
            head = read_exact(s, 4)
            if head is None:
                return
            (n,) = struct.unpack(">I", head)
            if n < 8 or n > 1 << 16:  # not ours: hang up
                return
            body = read_exact(s, n)
            if body is None:
                return
            typ, flags, rid = struct.unpack(">HHI", body[:8])
            payload = os.urandom(random.randrange(0, 200))
            s.sendall(struct.pack(">IHHI", 8 + len(payload), typ | 0x8000,
                                  0, rid) + payload)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def client(port, n, seed):
    rnd = random.Random(seed)
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if i % 20 == 19:
            s.close()  # says nothing
            continue
        if i % 10 == 9:
            s.sendall(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 100))))
            s.settimeout(1)
            try:
                s.recv(100)
            except OSError:
                pass
            s.close()
            continue
        for _ in range(rnd.randrange(1, 4)):
            payload = bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 300)))
            msg = struct.pack(">IHHI", 8 + len(payload), rnd.randrange(16),
                              rnd.randrange(4), rnd.randrange(1 << 32)) + payload
            if rnd.random() < 0.3:  # split over two writes
                cut = rnd.randrange(1, len(msg))
                s.sendall(msg[:cut])
                time.sleep(0.002)
                s.sendall(msg[cut:])
            else:
                s.sendall(msg)
            (m,) = struct.unpack(">I", read_exact(s, 4))
            read_exact(s, m)
        s.close()


def main():
    if sys.argv[1] == "server":
        srv = Server(("127.0.0.1", int(sys.argv[2])), Handler)
        if "--ready" in sys.argv:
            open(sys.argv[sys.argv.index("--ready") + 1], "w").close()
        srv.serve_forever()
    else:
        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
        client(int(sys.argv[2]), int(sys.argv[3]), seed)


if __name__ == "__main__":
    main()
