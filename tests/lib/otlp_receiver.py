# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A tiny OTLP/HTTP receiver on loopback for the kmon-trace tests: every
request is logged as one JSON line {"method","path","content_type",
"authorization","status","body"} in LOG; it answers as a collector would.

  otlp_receiver.py PORT_FILE LOG [--busy N] [--partial N] [--status S]

--busy N     the first N POSTs get 503 (a retry is expected)
--partial N  the first good POST answers partialSuccess with N rejected
--status S   every POST gets S (e.g. 400: not retried)
Writes the port it listens on to PORT_FILE; stops on SIGTERM."""
import argparse
import http.server
import json
import signal
import sys

a = None
posts = 0
partial_sent = False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as collectors do

    def do_POST(self):
        global posts, partial_sent
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        posts += 1
        status, answer = 200, b"{}"
        if a.status:
            status, answer = a.status, b'{"message":"refused"}'
        elif posts <= a.busy:
            status, answer = 503, b'{"message":"busy"}'
        elif a.partial and not partial_sent:
            partial_sent = True
            answer = json.dumps({"partialSuccess": {
                "rejectedSpans": str(a.partial),
                "errorMessage": "test"}}).encode()
        with open(a.log, "a") as log:
            log.write(json.dumps({
                "method": "POST", "path": self.path,
                "content_type": self.headers.get("Content-Type"),
                "authorization": self.headers.get("Authorization"),
                "status": status, "body": body.decode()}) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def main():
    global a
    ap = argparse.ArgumentParser()
    ap.add_argument("port_file")
    ap.add_argument("log")
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--partial", type=int, default=0)
    ap.add_argument("--status", type=int, default=0)
    a = ap.parse_args()
    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
