#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext on MySQL's protocol: mariadbd with a certificate
# and two mariadb clients with --ssl, each running three queries (the
# second fails: ERR 1146). The wire carries the greeting and the SSL
# request in the clear; inside TLS the plaintext begins with the login.
# mariadbd reads each packet's 4-byte header, then its body in a second
# SSL_read that OpenSSL serves from the record it holds (no socket byte
# moves in it: tls_ssls ties it to the connection). The clients connect
# while the server is stopped (SIGSTOP: they wait for its greeting), so
# they are attached before their first SSL call. Each side has per
# session exactly the login (with the SSL request before it) and the
# three queries: protocol mysql, tls true, the failed query's status
# 1146 and error, and both sides count the same plaintext bytes.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
SESSIONS=2

PORT=$(test_port)
tls_cert db.test
start_mariadb "$PORT" --ssl-cert="$WORK/cert.pem" --ssl-key="$WORK/key.pem"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: db, match: { pid: $MARIADB_PID } }
  - { name: cli, match: { comm: mariadb } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
tls_wait_attached $MARIADB_PID

printf 'SELECT 1;\nSELECT * FROM nosuch.t;\nSELECT 2;\n' >"$WORK/q.sql"
kill -STOP $MARIADB_PID
clients=()
for ((s = 0; s < SESSIONS; s++)); do
	mariadb -h 127.0.0.1 -P "$PORT" -u root --ssl --force \
		<"$WORK/q.sql" >"$WORK/q$s.out" 2>&1 &
	clients+=($!)
	STARTED_PIDS+=($!)
done
tls_wait_attached "${clients[@]}"
sleep 0.2 # the uprobes' first hit after a quiet spell waits a grace period
kill -CONT $MARIADB_PID
for ((s = 0; s < SESSIONS; s++)); do
	wait ${clients[$s]}
	grep -q "ERROR 1146" "$WORK/q$s.out" ||
		fail "session $s: $(cat "$WORK/q$s.out")"
done
sleep 1.2 # two intervals
stop_kmond

# the login (after the SSL request), SELECT 1, the failed SELECT, SELECT 2
python3 tests/lib/tls_check.py plain "$WORK/out.json" "$PORT" $SESSIONS 4 \
	- mysql -/false/false/-/- -/false/false/-/- 1146/true/true/-/- \
	-/false/false/-/- || fail "mysql inside TLS"
python3 - "$WORK/out.json" "$PORT" <<'PY' || fail "the two sides' bytes differ"
import json, sys
port = int(sys.argv[2])
sides = {"server": [], "client": []}
for r in map(json.loads, open(sys.argv[1])):
    if r["kind"] == "tcp" and port in (r.get("lport"), r.get("rport")):
        sides[r["side"]].append((r["req_bytes"], r["resp_bytes"]))
if sorted(sides["server"]) != sorted(sides["client"]):
    sys.exit(f"server {sorted(sides['server'])}, client {sorted(sides['client'])}")
PY
echo PASS
