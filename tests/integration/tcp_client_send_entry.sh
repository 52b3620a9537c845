#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A call starts when its caller enters the send, not when the send
# returns: requests of 2 MiB through 64 KiB socket buffers, read by a
# server that takes 5 ms per 64 KiB, block the caller's send until the
# server has read most of them. Protocol identification is off, so the
# send's entry is followed for the client side alone. For each of the
# calls on one connection, the client's latency is at least the server's
# (their records joined by the request's sequence number).
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port)
CALLS=5
PEER="python3 $(dirname "$0")/../lib/bulk_peer.py"
OPTS="--calls $CALLS --request $((2 << 20)) --buf $((64 << 10)) --read-pause 0.005"
$PEER server $PORT "$WORK/listening" $OPTS &
server=$!
STARTED_PIDS+=($server)
for _ in $(seq 50); do [ -e "$WORK/listening" ] && break; sleep 0.1; done
$PEER client $PORT "$WORK/go" $OPTS &
client=$!
STARTED_PIDS+=($client)

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: srv, match: { pid: $server } }
  - { name: caller, match: { pid: $client } }
collectors:
  tcp: { enabled: true, protocols: false }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # one interval: the pids are selected
touch "$WORK/go"
wait $client || fail "the client failed"
wait $server || fail "the server failed"
sleep 1.2 # two intervals
stop_kmond

python3 - "$WORK/out.json" $PORT $CALLS <<'PY' || fail "client latency below the server's"
import json, sys
port, calls = int(sys.argv[2]), int(sys.argv[3])
side = {"server": {}, "client": {}}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "tcp" and port in (r["lport"], r["rport"]):
        side[r["side"]][r["req_seq"]] = r["latency_ns"]
print("server", sorted(side["server"].values()))
print("client", sorted(side["client"].values()))
if len(side["server"]) != calls or side["server"].keys() != side["client"].keys():
    sys.exit("want %d calls seen from both ends" % calls)
for seq, lat in side["server"].items():
    if side["client"][seq] < lat:
        sys.exit("call %d: client %d ns, server %d ns"
                 % (seq, side["client"][seq], lat))
PY
echo "PASS"
