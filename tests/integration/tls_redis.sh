#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext through uprobes on OpenSSL 3: redis-server with
# --tls-port (monitored) and a Python ssl client speaking RESP
# (monitored); then redis-cli --tls (monitored) against a second
# redis-server, its commands written to it once kmond has attached it.
# Every command is one record per side with protocol redis, tls true,
# the ClientHello's server name, and the error reply's status.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
CONNS=2
REQS=6

PORT=$(test_port 2)
CLI_PORT=$((PORT + 1))
tls_cert cache.test

# redis_tls PORT: a redis-server with TLS only, on PORT; sets REDIS
redis_tls() {
	redis-server --port 0 --tls-port "$1" --bind 127.0.0.1 --save '' \
		--appendonly no --daemonize no --dir "$WORK" \
		--tls-cert-file "$WORK/cert.pem" --tls-key-file "$WORK/key.pem" \
		--tls-ca-cert-file "$WORK/cert.pem" --tls-auth-clients no \
		>"$WORK/redis-$1.log" 2>&1 &
	STARTED_PIDS+=($!)
	REDIS=$!
	wait_port "$1" || fail "redis did not start: $(tail -3 "$WORK/redis-$1.log")"
}
redis_tls "$CLI_PORT"
CLI_REDIS=$REDIS
redis_tls "$PORT"

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
  - { name: cache2, match: { pid: $CLI_REDIS } }
  - { name: redis-cli, match: { comm: redis-cli } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
tls_wait_attached $REDIS $CLIENT
touch "$WORK/go"
wait $CLIENT || fail "the client failed"

# redis-cli reads its commands from a pipe held open until it is
# attached (it connects at once: the ClientHello is seen on the wire)
mkfifo "$WORK/cli.in"
exec 3<>"$WORK/cli.in"
redis-cli --tls --insecure --sni cache.test -p "$CLI_PORT" \
	<"$WORK/cli.in" >"$WORK/cli.out" 2>&1 3>&- &
CLI=$!
STARTED_PIDS+=($CLI)
tls_wait_attached $CLI_REDIS $CLI
printf '%s\n' "SET k v" "GET k" "NOSUCH x" PING "INCR k" "DEL k" >&3
exec 3>&-
wait $CLI || fail "redis-cli failed: $(cat "$WORK/cli.out")"
sleep 1.2 # two intervals
stop_kmond

# SET, GET, an unknown command (an error reply), PING, INCR of a
# non-number (an error reply), DEL
python3 tests/lib/tls_check.py plain "$WORK/out.json" "$PORT" $CONNS $REQS \
	cache.test redis -/false/false/-/- -/false/false/-/- \
	ERR/true/true/-/- -/false/false/-/- ERR/true/true/-/- \
	-/false/false/-/- || fail "redis inside TLS"
# redis-cli asks for COMMAND DOCS first (its hints), then the same six
python3 tests/lib/tls_check.py plain "$WORK/out.json" "$CLI_PORT" 1 7 \
	cache.test redis -/false/false/-/- -/false/false/-/- \
	-/false/false/-/- ERR/true/true/-/- -/false/false/-/- \
	ERR/true/true/-/- -/false/false/-/- || fail "redis-cli inside TLS"
