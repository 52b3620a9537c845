#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: a request's parts 0.45 s apart, intervals 0.5 s
# Load records of responses that take their time, intervals of 0.5 s:
# - streamer: a response in two parts 0.45 s apart (a stream). The
#   request is in progress until its last byte (its end moves with each
#   part until it has been quiet for an interval), so the records'
#   occupancy x interval add up to the tcp record's latency, though
#   mostly no request arrives or completes in the interval of the second
#   part.
# - blocked: a 64 MiB answer to a client that reads it only after 1 s.
#   The request ends when that send begins, but counts once it returns:
#   the intervals read while it blocked counted it in progress, and the
#   next one takes nothing back (it did not read as 2^64 ns less).
# No interval is busy more than all of its time.
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port 2)
# serve PORT MODE READY: one request, then wait for the client to close
serve() {
	python3 - "$@" <<'PY' &
import socket, sys, time
port, mode, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen()
open(ready, "w").close()
c, _ = s.accept()
with c:
    c.recv(100)
    if mode == "stream":
        c.sendall(b"a" * 10)
        time.sleep(0.45)
        c.sendall(b"b" * 10)
    else:
        c.sendall(b"c" * (64 << 20))
    c.recv(1)  # until the client closes
PY
	STARTED_PIDS+=($!)
	SERVED+=($!)
	for _ in $(seq 50); do [ -e "$3" ] && return; sleep 0.1; done
	fail "the $2 server did not start"
}
serve $PORT stream "$WORK/up1"
serve $((PORT + 1)) blocked "$WORK/up2"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: streamer
    match: { port: $PORT }
  - name: blocked
    match: { port: $((PORT + 1)) }
collectors:
  tcp: { enabled: true, requests: all }
YAML
start_kmond "$WORK/kmond.yaml"
python3 - "$PORT" <<'PY' || fail "the clients failed"
import socket, sys, time
port = int(sys.argv[1])
def call(port, want, wait):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"hello\n")
        time.sleep(wait)
        got = 0
        while got < want:
            got += len(s.recv(1 << 20))
call(port, 20, 0)
call(port + 1, 64 << 20, 1.0)
PY
wait "${SERVED[@]}"
sleep 1.2 # two intervals: the requests and their load are reported
stop_kmond

python3 - "$WORK/out.json" <<'PY' || fail "load records out of bounds"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def of(kind, svc):
    return [r for r in recs if r["kind"] == kind and r.get("service") == svc]
for svc in ("streamer", "blocked"):
    tcp, load = of("tcp", svc), of("load", svc)
    assert len(tcp) == 1, f"{svc}: {len(tcp)} tcp records"
    lat = tcp[0]["latency_ns"]
    area = sum(r["occupancy"] * r["interval_ns"] for r in load)
    print(f"{svc}: latency {lat} ns, occupancy x interval {area:.0f} ns, "
          f"occupancy {[round(r['occupancy'], 3) for r in load]}, "
          f"busy {[round(r['busy'], 3) for r in load]}")
    assert sum(r["arrivals"] for r in load) == 1
    assert sum(r["completions"] for r in load) == 1
    assert all(0 <= r["busy"] <= 1 for r in load), "busy beyond its interval"
    assert all(0 <= r["occupancy"] <= 2 for r in load), "occupancy beyond one request"
    if svc == "streamer":
        assert lat > 0.45e9, "the latency misses the second part"
        assert abs(area - lat) <= 1e-3 * lat, "the area is not the latency"
PY
echo PASS
