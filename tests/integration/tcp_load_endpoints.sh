#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The client side's load slots are reused too: a monitored caller calls
# 1100 endpoints (loopback ports of a server kmond does not monitor) once
# each, is quiet for longer than 64 intervals (an endpoint nobody called
# that long is forgotten, its slot freed), then calls 1100 others: 2200
# endpoints over time, more than the 2048 slots servers and endpoints
# share. Every call is an arrival and a completion of its endpoint's
# `load` records (side client).
source "$(dirname "$0")/../lib/kmond.sh"

PHASE=1100
cat >"$WORK/peer.py" <<'PY'
import os, resource, selectors, socket, sys, time

role, n, ports = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if role == "server":
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * n + 256), hard))
    sel = selectors.DefaultSelector()
    for _ in range(n):
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen(8)
        sel.register(ls, selectors.EVENT_READ)
    with open(ports + ".tmp", "w") as f:
        f.write("\n".join(str(k.fileobj.getsockname()[1])
                          for k in sel.get_map().values()))
    os.rename(ports + ".tmp", ports)
    while True:
        for key, _ in sel.select():
            c, _ = key.fileobj.accept()
            if c.recv(4) == b"ping":
                c.sendall(b"pong")
            c.close()
else:
    half = [int(p) for p in open(ports).read().split()]
    half = half[:n // 2] if role == "first" else half[n // 2:]
    for port in half:
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.sendall(b"ping")
            if c.recv(4) != b"pong":
                sys.exit("no answer from %d" % port)
            c.shutdown(socket.SHUT_WR)
            c.recv(1)  # the server's close
PY
python3 "$WORK/peer.py" server $((2 * PHASE)) "$WORK/ports" &
STARTED_PIDS+=($!)
for _ in $(seq 100); do [ -e "$WORK/ports" ] && break; sleep 0.1; done
[ -e "$WORK/ports" ] || fail "the server did not listen"
# the caller: a shell that waits for the go file, then runs both phases,
# 8 s apart (64 intervals are 6.4 s; kmond's intervals run late in a slow
# guest: an arm64 one still held 104 endpoints of the first phase at 8 s)
bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	python3 "$1/peer.py" first $2 "$1/ports" && sleep $3 &&
	python3 "$1/peer.py" second $2 "$1/ports"' _ "$WORK" $((2 * PHASE)) \
	$((8 * ${TEST_TIME_SCALE:-1})) &
caller=$!
STARTED_PIDS+=($caller)
cat >"$WORK/kmond.yaml" <<YAML
interval: 100ms
services:
  - { name: caller, match: { pid: $caller } }
collectors:
  tcp: { enabled: true, requests: none, protocols: false }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.3 # the pid is selected
touch "$WORK/go"
wait $caller || fail "the calls failed"
sleep 0.5 # the last calls reported
stop_kmond

python3 - "$WORK/out.json" "$WORK/ports" <<'PY' || fail "load records"
import json, sys
ports = set(open(sys.argv[2]).read().split())
arrivals = completions = 0
seen = set()
lost = missed = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "stats":
        lost = r["collectors"]["tcp"]["lost"]
        missed = r["collectors"]["tcp"]["missed"]
    if r["kind"] != "load" or r.get("side") != "client":
        continue
    port = r["endpoint"].rsplit(":", 1)[1]
    if port in ports:
        arrivals += r["arrivals"]
        completions += r["completions"]
        seen.add(port)
print("endpoints %d of %d, arrivals %d, completions %d; tcp lost %d "
      "(missed %d)" % (len(seen), len(ports), arrivals, completions, lost,
                       missed))
if (len(seen), arrivals, completions) != (len(ports),) * 3:
    sys.exit("want one arrival and one completion per endpoint")
PY
echo "PASS"
