#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An HTTPS client over Python's ssl (OpenSSL 3, libssl.so.3), for the
TLS tests: it imports ssl (so its libssl is mapped) and waits for a file
before it connects, so kmond has attached its uprobes by then.

    tls_client.py GO_FILE HOST PORT SNI CONNS REQUESTS PATH...

CONNS connections, each REQUESTS requests over keep-alive, cycling
through the PATHs; prints one line per request: status, bytes."""
import http.client
import os
import socket
import ssl
import sys
import time

go, host, port, sni = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
conns, requests, paths = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7:]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
while not os.path.exists(go):
    time.sleep(0.05)
n = 0
for _ in range(conns):
    c = http.client.HTTPSConnection(host, port, context=ctx)
    # wrapped by hand: the ClientHello names sni
    raw = socket.create_connection((host, port))
    c.sock = ctx.wrap_socket(raw, server_hostname=sni)
    for _ in range(requests):
        path = paths[n % len(paths)]
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        print(r.status, len(body), flush=True)
        n += 1
    c.close()
