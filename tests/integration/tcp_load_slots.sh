#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: every process monitored; exact counts in 2048 load slots
# The load accumulators' slots are reused: with no services (every
# process monitored, each server keyed by its pid), 2500 short-lived
# servers (more than the 2048 slots), 100 at a time, each answering one
# request and exiting 300 ms later (after the report that counted it).
# Every request is an arrival and a completion of its server's `load`
# records: a slot is freed once its process has exited, also when that
# comes after its last report, and a freed slot serves a later server.
source "$(dirname "$0")/../lib/kmond.sh"

cat >"$WORK/kmond.yaml" <<YAML
interval: 100ms
collectors:
  tcp: { enabled: true, requests: none, protocols: false, client: false }
YAML
start_kmond "$WORK/kmond.yaml"

python3 - "$WORK/pids" <<'PY' || fail "the servers failed"
import os, socket, sys, time

SERVERS, BATCH = 2500, 100

def serve(w):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    os.write(w, b"%d\n" % s.getsockname()[1])
    conn, _ = s.accept()
    conn.recv(16)
    conn.sendall(b"pong")
    conn.recv(16)  # the client's close
    conn.close()
    time.sleep(0.3)  # exits after the report that saw its request
    os._exit(0)

pids = []
for _ in range(SERVERS // BATCH):
    batch = []
    for _ in range(BATCH):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            serve(w)
        os.close(w)
        batch.append((pid, os.fdopen(r)))
    for pid, r in batch:
        port = int(r.readline())
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.sendall(b"ping")
            if c.recv(16) != b"pong":
                sys.exit("no answer from %d" % pid)
        pids.append(pid)
    for pid, _ in batch:
        os.waitpid(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(map(str, pids)))
PY
sleep 0.5 # the last servers' requests reported
stop_kmond

python3 - "$WORK/out.json" "$WORK/pids" <<'PY' || fail "load records"
import json, sys
pids = set(open(sys.argv[2]).read().split())
arrivals = completions = 0
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "load" and str(r.get("pid")) in pids:
        arrivals += r["arrivals"]
        completions += r["completions"]
        seen.add(str(r["pid"]))
print("servers %d of %d, arrivals %d, completions %d"
      % (len(seen), len(pids), arrivals, completions))
if (len(seen), arrivals, completions) != (len(pids),) * 3:
    sys.exit("want one arrival and one completion per server")
PY
echo "PASS"
