#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gRPC's outcomes (docs/design/outcomes.md, "gRPC"): a gRPC call that
# failed is answered :status 200, its failure in the grpc-status. A real
# gRPC server and client (Debian's python3-grpcio, grpc-core; h2c): 3
# calls that succeed, 2 that fail NOT_FOUND, 2 INTERNAL, each method's on
# a connection of its own. grpc-core sends the grpc-status past the 48
# bytes of the response kmond keeps (or from HPACK's dynamic table): so
# every record has its :status 200 and method POST, the first call of a
# connection its route, and no `error` (the build before said false,
# for the failed calls too); the counts by outcome on the load and the
# topology are those of the records: none, and the edge's status_2xx 7.
# The client's records (7, and at times one more as a channel ends, its
# control frames taken for a call): grpc-core
# sends from several buffers, whose request head kmond does not gather:
# no outcome either.
source "$(dirname "$0")/../lib/kmond.sh"

need_protocols
GRPC_PY=/usr/bin/python3
PEER=$(dirname "$0")/../lib/grpc_peer.py
"$GRPC_PY" -c 'import grpc' 2>/dev/null || skip "python3-grpcio missing"
PORT=$(test_port)
"$GRPC_PY" "$PEER" serve "$PORT" >"$WORK/server.out" 2>&1 &
STARTED_PIDS+=($!)
for ((i = 0; i < 100; i++)); do
	grep -q serving "$WORK/server.out" && break
	sleep 0.1
done
grep -q serving "$WORK/server.out" || fail "the gRPC server: $(cat "$WORK/server.out")"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: rpc, match: { port: $PORT } }
  - { name: caller, match: { comm: python3 } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
for call in "Ok 3" "Missing 2" "Fail 2"; do
	"$GRPC_PY" "$PEER" call "$PORT" $call >>"$WORK/calls.out" ||
		fail "grpc_peer call $call"
done
expect_eq "the calls' codes" "$(xargs <"$WORK/calls.out")" "0:3 5:2 13:2"
sleep 1.2 # two intervals: the quiet connections' last calls
stop_kmond

python3 - "$WORK/out.json" "$PORT" <<'PY' || fail "gRPC's outcomes"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
port = int(sys.argv[2])
tcp = [r for r in recs if r["kind"] == "tcp" and port in (r["lport"], r["rport"])]
errors = []
server = [r for r in tcp if r["side"] == "server"]
client = [r for r in tcp if r["side"] == "client"]
# the client's: one a call, and at times one more as a channel ends:
# grpc-core's control frames then (82 bytes sent, 46 read, seen under
# ASan), sent from several buffers, are not all walked and make a turn
# (docs/design/outcomes.md, "Not exact"): at most one a channel
if len(server) != 7 or not 7 <= len(client) <= 10:
    errors.append(f"{len(server)} server and {len(client)} client records, "
                  "want 7 and 7 to 10")
for r in tcp:
    if r["protocol"] != "http2":
        errors.append(f"{r['side']}: protocol {r['protocol']}")
    if "error" in r or "grpc_status" in r:
        errors.append(f"{r['side']}: error {r.get('error')} grpc_status "
                      f"{r.get('grpc_status')}: grpc-status is not in its heads")
for r in server:
    if (r.get("status"), r.get("method")) != (200, "POST"):
        errors.append(f"server: status {r.get('status')} method {r.get('method')}")
routes = sorted(r["route"] for r in server if "route" in r)
if routes != ["/kmon.Test/Fail", "/kmon.Test/Missing", "/kmon.Test/Ok"]:
    errors.append(f"routes {routes}: each connection's first call's")
for kind, key, count in (("load", "service", "completions"),
                         ("topology", "dst", "requests")):
    rs = [r for r in recs if r["kind"] == kind and r.get(key) == "rpc" and
          r.get("side") == "server"]
    got = [sum(r.get(f, 0) for r in rs) for f in (count, "outcomes", "errors")]
    if got != [7, 0, 0]:
        errors.append(f"{kind}: {count}, outcomes, errors {got}, want 7 0 0")
    if kind == "topology" and sum(r.get("status_2xx", 0) for r in rs) != 7:
        errors.append(f"topology: status_2xx {[r.get('status_2xx') for r in rs]}, want 7")
if errors:
    sys.exit("\n".join(errors))
PY
echo "ok: 7 gRPC calls, each end's record with no outcome it cannot read"
