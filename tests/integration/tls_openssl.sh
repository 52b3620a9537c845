#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext between openssl s_server and s_client (libssl.so.3
# both), each exchange HTTP/1.1 typed by hand (tests/lib/tls_openssl.py):
# one record per exchange per side, protocol http, tls true, the SNI
# s_client sent, the status typed. s_client does its handshake inside its
# first SSL_write, of nothing: no request's. s_server is attached from
# kmond's start; the client before it execs s_client (its uprobes stay
# across the exec: the same libssl.so.3).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
STATUSES="200 404 200 503 200 201"

PORT=$(test_port)
tls_cert api.test
python3 tests/lib/tls_openssl.py "$WORK" $PORT api.test $STATUSES \
	>"$WORK/exchanges" 2>"$WORK/driver.err" &
DRIVER=$!
STARTED_PIDS+=($DRIVER)
for ((i = 0; i < 50; i++)); do
	[ -s "$WORK/pids" ] && break
	sleep 0.1
done
read -r SERVER CLIENT <"$WORK/pids" || fail "the driver did not start"
STARTED_PIDS+=($SERVER $CLIENT)

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: srv, match: { pid: $SERVER } }
  - { name: cli, match: { pid: $CLIENT } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
tls_wait_attached $SERVER $CLIENT
touch "$WORK/go"
wait $DRIVER || fail "the exchanges failed: $(cat "$WORK/driver.err")"
expect_eq "exchanges" "$(xargs <"$WORK/exchanges")" "$STATUSES"
sleep 1.2 # two intervals
stop_kmond

python3 - "$WORK/out.json" $PORT $STATUSES <<'PY' || fail "openssl inside TLS"
import json, sys
port, statuses = int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
recs = [r for r in map(json.loads, open(sys.argv[1]))
        if r["kind"] == "tcp" and port in (r["lport"], r["rport"])]
want = [("http", True, "api.test", s, "GET") for s in statuses]
errors = []
for side in ("client", "server"):
    got = [(r["protocol"], r.get("tls"), r.get("tls_sni"), r.get("status"),
            r.get("method"))
           for r in sorted(recs, key=lambda r: r["ts"]) if r["side"] == side]
    if got != want:
        errors.append(f"{side}: {got}")
if errors:
    sys.exit("\n".join(errors))
print(f"ok: {len(statuses)} exchanges, one record each a side")
PY
