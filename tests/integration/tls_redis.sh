#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext through uprobes on OpenSSL 3: redis-server with
# --tls-port (monitored) and a Python ssl client speaking RESP
# (monitored). Every command is one record per side with protocol redis,
# tls true, the ClientHello's server name, and the error reply's status.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_protocols
CONNS=2
REQS=6

PORT=$(test_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=cache.test -batch 2>/dev/null ||
	fail "openssl req"
redis-server --port 0 --tls-port "$PORT" --bind 127.0.0.1 --save '' \
	--appendonly no --daemonize no --dir "$WORK" \
	--tls-cert-file "$WORK/cert.pem" --tls-key-file "$WORK/key.pem" \
	--tls-ca-cert-file "$WORK/cert.pem" --tls-auth-clients no \
	>"$WORK/redis.log" 2>&1 &
STARTED_PIDS+=($!)
REDIS=$!
wait_port "$PORT" || fail "redis did not start: $(tail -3 "$WORK/redis.log")"

python3 tests/lib/tls_client.py "$WORK/go" 127.0.0.1 "$PORT" cache.test \
	$CONNS $REQS redis "SET k v" "GET k" "NOSUCH x" PING "INCR k" \
	"DEL k" >"$WORK/client.out" &
CLIENT=$!
STARTED_PIDS+=($CLIENT)
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: cache, match: { pid: $REDIS } }
  - { name: cli, match: { pid: $CLIENT } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
tls_wait_attached $REDIS $CLIENT
touch "$WORK/go"
wait $CLIENT || fail "the client failed"
sleep 1.2 # two intervals
stop_kmond

# SET, GET, an unknown command (an error reply), PING, INCR of a
# non-number (an error reply), DEL
python3 tests/lib/tls_check.py plain "$WORK/out.json" "$PORT" $CONNS $REQS \
	cache.test redis -/false/false/-/- -/false/false/-/- \
	ERR/true/true/-/- -/false/false/-/- ERR/true/true/-/- \
	-/false/false/-/- || fail "redis inside TLS"
