#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: comm: postgres and psql, with exact attach counts
# TLS read in plaintext where each connection is served by a process
# forked for it: PostgreSQL with ssl = on forks a backend per connection,
# and the backend does the handshake after the SSLRequest. Each backend
# is attached as it is forked (to its parent's libssl), each psql (a
# short-lived client, sslmode=require) at its exec. Both are given time
# to be attached before their first SSL call, as tls_curl's waiting runs
# are (psql -W waits for a password on stdin before it connects; the
# server's pre_auth_delay holds a backend 1 s before it reads the
# SSLRequest): the first uprobe after a quiet spell waits for a kernel
# grace period (4-17 ms here, docs/design/tls.md), longer than a
# backend's handshake. Then every exchange is one record per side: the
# SSLRequest (postgresql, before the TLS: no tls), the startup and each
# query (postgresql, tls true), the failed query with its SQLSTATE; the
# Terminate and close_notify are none. No tls_sni: the SSLRequest named
# the connection before its ClientHello came (psql sends db.test).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
SESSIONS=3

PG=$(test_port)
mkdir -p "$WORK/pg"
tls_cert db.test "$WORK/pg"
chown postgres "$WORK/pg/key.pem" "$WORK/pg/cert.pem"
chmod 600 "$WORK/pg/key.pem"
start_postgres $PG ssl=on ssl_cert_file=$WORK/pg/cert.pem \
	ssl_key_file=$WORK/pg/key.pem pre_auth_delay=1

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: db, match: { comm: postgres } }
  - { name: cli, match: { comm: psql } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
cat >"$WORK/q.sql" <<'SQL'
SELECT 1;
SELECT * FROM nosuch;
SELECT 2;
SQL
for ((i = 0; i < SESSIONS; i++)); do
	# the name for the SNI; no GSSAPI request first: TLS straight after
	# the SSLRequest
	(sleep 0.3 && echo any) |
		psql -X -q -W -f "$WORK/q.sql" "host=db.test hostaddr=127.0.0.1
			port=$PG user=postgres dbname=postgres sslmode=require
			gssencmode=disable" >>"$WORK/psql.out" 2>>"$WORK/psql.err"
done
expect_eq "psql's errors" \
	"$(grep -c 'relation "nosuch" does not exist' "$WORK/psql.err")" $SESSIONS
expect_eq "psql's rows" "$(grep -c '^ *[12]$' "$WORK/psql.out")" $((2 * SESSIONS))
sleep 1.2 # two intervals
stop_kmond

python3 - "$WORK/out.json" $PG $SESSIONS <<'PY' || fail "PostgreSQL inside TLS"
import collections, json, sys
port, sessions = int(sys.argv[2]), int(sys.argv[3])
recs = list(map(json.loads, open(sys.argv[1])))
stats = [r["collectors"]["tcp"] for r in recs if r["kind"] == "stats"][-1]
# each session in order: SSLRequest, startup, SELECT 1, the failed
# SELECT, SELECT 2
want = [("postgresql", None, None, None)] + \
       [("postgresql", True, None, s) for s in (None, None, "42P01", None)]
errors = []
for side in ("client", "server"):
    conns = collections.defaultdict(list)
    for r in sorted(recs, key=lambda r: r.get("ts", 0)):
        if r["kind"] == "tcp" and r["side"] == side and \
                port in (r["lport"], r["rport"]):
            conns[r["lport"] if side == "client" else r["rport"]].append(
                (r["protocol"], r.get("tls"), r.get("tls_sni"),
                 r.get("status")))
    if len(conns) != sessions:
        errors.append(f"{side}: {len(conns)} connections, want {sessions}")
    for conn, got in conns.items():
        if got != want:
            errors.append(f"{side} {conn}: {got}")
started = stats["tls_attached_at_start"]
if started != 2 * sessions or stats["tls_gone_unattached"]:
    errors.append(f"attached at start {started} (want {2 * sessions}), "
                  f"gone first {stats['tls_gone_unattached']}")
if errors:
    sys.exit("\n".join(errors))
print(f"ok: {sessions} sessions, each exchange one record a side")
PY
grep "attached .* after it started" "$WORK/kmond.err" |
	awk '{ print $(NF - 4) }' | sort -n | xargs echo "attach delays (us):"
