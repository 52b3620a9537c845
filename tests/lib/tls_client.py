#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A client over Python's ssl (OpenSSL 3, libssl.so.3), for the TLS
tests: it imports ssl (so its libssl is mapped) and waits for a file
before it connects, so kmond has attached its uprobes by then.

    tls_client.py GO_FILE HOST PORT SNI CONNS REQUESTS http PATH...
    tls_client.py GO_FILE HOST PORT SNI CONNS REQUESTS redis COMMAND...

CONNS connections, each REQUESTS requests (HTTP/1.1 keep-alive GETs of
the PATHs, or Redis COMMANDs, words split on blanks), cycling through
the list; prints one line per request: its answer's status or first
line."""
import http.client
import os
import socket
import ssl
import sys
import time

go, host, port, sni = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
conns, requests = int(sys.argv[5]), int(sys.argv[6])
mode, items = sys.argv[7], sys.argv[8:]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
while not os.path.exists(go):
    time.sleep(0.05)


def redis_reply(f):
    """One RESP reply from file f, whole (its nested parts read too)."""
    line = f.readline()
    if line[:1] == b"$" and int(line[1:]) >= 0:
        f.read(int(line[1:]) + 2)
    elif line[:1] == b"*":
        for _ in range(max(int(line[1:]), 0)):
            redis_reply(f)
    return line.strip().decode()


def http_conn():
    c = http.client.HTTPSConnection(host, port, context=ctx)
    # wrapped by hand: the ClientHello names sni
    c.sock = ctx.wrap_socket(socket.create_connection((host, port)),
                             server_hostname=sni)
    for i in range(requests):
        c.request("GET", items[i % len(items)])
        r = c.getresponse()
        r.read()
        print(r.status, flush=True)
    c.close()


def redis_conn():
    s = ctx.wrap_socket(socket.create_connection((host, port)),
                        server_hostname=sni)
    f = s.makefile("rb")
    for i in range(requests):
        words = items[i % len(items)].split()
        s.sendall(f"*{len(words)}\r\n".encode() + b"".join(
            f"${len(w)}\r\n{w}\r\n".encode() for w in words))
        print(redis_reply(f), flush=True)
    f.close()
    s.close()


for _ in range(conns):
    http_conn() if mode == "http" else redis_conn()
