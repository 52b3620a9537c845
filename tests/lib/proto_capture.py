#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Records the first messages of real connections as protocol fixtures.

A loopback proxy: listens on LISTEN, forwards every connection to
UPSTREAM, and writes the first MAX reads each way (up to 512 bytes each,
with the full length) of the first connection to OUT, one message a line:
    C <len> <hex>    sent by the client
    S <len> <hex>    sent by the server
The first line is "# expect: PROTO". Used to make the fixtures of
tests/unit/protocol/ from real Debian clients and servers.
    proto_capture.py LISTEN_PORT UPSTREAM_PORT OUT PROTO [--conn N]
"""
import argparse
import select
import socket
import threading

MAX = 6
KEEP = 512


def relay(cli, up, msgs, lock):
    socks = {cli: (up, "C"), up: (cli, "S")}
    while True:
        r, _, _ = select.select(list(socks), [], [], 30)
        if not r:
            return
        for s in r:
            try:
                data = s.recv(65536)
            except ConnectionResetError:  # a client that resets (amqp-tools)
                data = b""
            dst, tag = socks[s]
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                del socks[s]
                if not socks:
                    return
                continue
            with lock:
                if len(msgs) < 2 * MAX:
                    msgs.append((tag, len(data), data[:KEEP]))
            dst.sendall(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listen", type=int)
    ap.add_argument("upstream", type=int)
    ap.add_argument("out")
    ap.add_argument("proto")
    ap.add_argument("--conn", type=int, default=1,
                    help="which connection to record (1: the first)")
    a = ap.parse_args()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen))
    ls.listen(64)
    n = 0
    while True:
        cli, _ = ls.accept()
        n += 1
        up = socket.create_connection(("127.0.0.1", a.upstream))
        msgs, lock = [], threading.Lock()
        if n != a.conn:
            threading.Thread(target=relay, args=(cli, up, msgs, lock),
                             daemon=True).start()
            continue
        relay(cli, up, msgs, lock)
        cli.close()
        up.close()
        with open(a.out, "w") as f:
            f.write("# expect: %s\n" % a.proto)
            for tag, length, data in msgs:
                f.write("%s %d %s\n" % (tag, length, data.hex()))
        return


if __name__ == "__main__":
    main()
