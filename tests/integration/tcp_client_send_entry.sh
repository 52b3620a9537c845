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
source "$(dirname "$0")/../lib/bulk_peer.sh"

PORT=$(test_port)
CALLS=5
bulk_exchange $PORT 500 both --calls $CALLS --request $((2 << 20)) \
	--buf $((64 << 10)) --read-pause 0.005

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
