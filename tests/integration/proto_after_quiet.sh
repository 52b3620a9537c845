#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Protocol identification after a time when no connection was capturing
# (every one decided: the ingress program then looks up no socket): a
# keep-alive connection to nginx, decided and kept busy, then one new
# connection after another, each its own capture. Every request of every
# connection counts as http (a connection not captured reads unknown: a
# name needs both directions).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_protocols

PORT=$(test_port)
N=20
start_nginx $PORT 1

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: web
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

# One connection decided, then quiet captures: 30 requests over 1.5 s.
python3 - "$PORT" <<'PY' || fail "the keep-alive client failed"
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for _ in range(30):
    c.request("GET", "/")
    c.getresponse().read()
    time.sleep(0.05)
PY
# Then N connections, one after another, each with one request.
for ((i = 0; i < N; i++)); do
	curl -s "http://127.0.0.1:$PORT/" >/dev/null || fail "curl failed"
	sleep 0.1
done
sleep 1 # reported
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
got=$($RECORDS "$out" --kind tcp --where service=web --count)
expect_eq "requests" "$got" $((30 + N))
got=$($RECORDS "$out" --kind tcp --where service=web --where protocol=http --count)
expect_eq "requests counted as http" "$got" $((30 + N))
echo "PASS"
