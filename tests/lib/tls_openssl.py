#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""openssl s_server and s_client talking HTTP/1.1 by hand, for the TLS
tests: one exchange at a time, each a request typed into s_client and
the answer typed into s_server once s_server has printed the request.

    tls_openssl.py DIR PORT SNI STATUS...

DIR holds cert.pem and key.pem; pids (s_server's, then the client's)
is written there once both are up. The client is this process's child
that imports ssl (so libssl.so.3 is mapped: kmond attaches it before it
runs s_client) and waits for DIR/go before it execs s_client: the
uprobes stay, the program's libssl being the same file. One exchange
per STATUS (an HTTP status code); prints one line per exchange: the
status s_client printed."""
import os
import select
import subprocess
import sys
import time

work, port, sni, statuses = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
go = os.path.join(work, "go")
server = subprocess.Popen(
    # no TLS 1.3 session tickets: s_client would read them in an SSL_read
    # after its first request went, as that response's first bytes
    # (docs/design/tls.md)
    ["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-naccept", "1",
     "-num_tickets", "0",
     "-cert", os.path.join(work, "cert.pem"),
     "-key", os.path.join(work, "key.pem")],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wait_then_exec = f"""
import os, ssl, time
while not os.path.exists({go!r}):
    time.sleep(0.05)
os.execvp("openssl", ["openssl", "s_client", "-connect", "127.0.0.1:{port}",
                      "-servername", {sni!r}, "-no_ign_eof"])
"""
client = subprocess.Popen(["python3", "-c", wait_then_exec],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
with open(os.path.join(work, "pids.tmp"), "w") as f:
    f.write(f"{server.pid} {client.pid}\n")
os.rename(os.path.join(work, "pids.tmp"), os.path.join(work, "pids"))


def wait_for(proc, text, seen):
    """Reads proc's output until it holds text (seen: what came so far)."""
    deadline = time.time() + 10
    while text not in seen[0]:
        left = deadline - time.time()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            sys.exit(f"timed out waiting for {text!r}")
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            sys.exit(f"EOF waiting for {text!r}")
        seen[0] += chunk
    at = seen[0].index(text) + len(text)
    seen[0] = seen[0][at:]


def type_into(proc, data):
    os.write(proc.stdin.fileno(), data)


server_seen, client_seen = [b""], [b""]
wait_for(server, b"ACCEPT", server_seen)
for i, status in enumerate(statuses):
    path = f"/item{i}"
    type_into(client, f"GET {path} HTTP/1.1\r\nHost: {sni}\r\n\r\n".encode())
    wait_for(server, f"GET {path} HTTP/1.1\r\nHost: {sni}\r\n\r\n".encode(),
             server_seen)
    body = f"answer {i}"
    type_into(server, f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}"
              f"\r\n\r\n{body}".encode())
    wait_for(client, body.encode(), client_seen)
    print(status, flush=True)
client.stdin.close() # s_client ends at its input's end
client.wait(timeout=10)
server.stdin.close()
server.wait(timeout=10)
