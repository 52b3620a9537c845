#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# pgbench monitored as a client, PostgreSQL on the same host monitored as
# a server, with each query protocol (simple, extended, prepared): on
# every benchmark connection one client-side record per statement of
# each transaction (the built-in TPC-B-like script: BEGIN, three UPDATEs,
# a SELECT, an INSERT, END), plus the connection's SSLRequest and startup
# exchanges and, prepared, one Parse per statement; every client record
# joins exactly one server record by (client port, req_seq, resp_seq),
# the client's latency at least the server's; dst names the server.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/caller.sh"

JOIN="python3 $(dirname "$0")/../lib/tcp_join.py"
CLIENTS=2 TX=20 STATEMENTS=7
# Protocols are identified only with every tcp hook on tp_btf (6.3+).
proto=unknown
"$KMOND" --probe 2>/dev/null | grep -Eq '^tcp +sock_recv +tp_btf' && proto=postgresql
PG=$(test_port)
start_postgres $PG
pgbench -h 127.0.0.1 -p $PG -U postgres -i -s 1 postgres >"$WORK/init.log" 2>&1 ||
	fail "pgbench -i: $(tail -3 "$WORK/init.log") $(tail -3 "$WORK/postgres.log")"
start_caller

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: bench, match: { pid: $CALLER_PID } }
  - { name: db, match: { port: $PG } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # one interval: the caller is selected

mark() { # the output's next line number, once an interval went by
	sleep 1.1
	echo $(($(wc -l <"$WORK/out.json") + 1))
}
from=$(mark)
for mode in simple extended prepared; do
	# -n: no vacuum before the run; SSLRequest asked (sslmode prefer) and
	# refused (the server has no certificate): one exchange
	in_caller $mode env PGSSLMODE=prefer pgbench -h 127.0.0.1 -p $PG \
		-U postgres -n -M $mode -c $CLIENTS -t $TX postgres
	grep -q "actually processed: $((CLIENTS * TX))/$((CLIENTS * TX))" \
		"$WORK/$mode.out" || fail "pgbench -M $mode: $(cat "$WORK/$mode.out")"
	to=$(mark)
	sed -n "$from,$((to - 1))p" "$WORK/out.json" >"$WORK/$mode.json"
	from=$to
done
stop_kmond

for mode in simple extended prepared; do
	per_conn=$((2 + TX * STATEMENTS))
	[ $mode = prepared ] && per_conn=$((per_conn + STATEMENTS))
	python3 - "$WORK/$mode.json" $PG $CLIENTS $per_conn $proto <<'PY' ||
import collections, json, sys
path, port, clients, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
proto = sys.argv[5]
recs = [r for r in map(json.loads, open(path))
        if r["kind"] == "tcp" and r["side"] == "client"]
for r in recs:
    if r["rport"] != port or r["dst"] != "db" or r["protocol"] != proto:
        sys.exit(f"a client record not to db ({proto}): {json.dumps(r)}")
per_conn = collections.Counter(r["lport"] for r in recs)
# pgbench's own connection first (the scale, the tables), then one per
# client
counts = sorted(per_conn.values())
if len(counts) != clients + 1 or counts[1:] != [want] * clients or counts[0] >= want:
    sys.exit(f"client records per connection {counts}, want {clients} of {want} and pgbench's own")
print(f"ok: {clients} x {want} client records, pgbench's own connection {counts[0]}")
PY
		fail "client records of pgbench -M $mode"
	pairs=$($JOIN join "$WORK/$mode.json" "$WORK/$mode.json") ||
		fail "pgbench -M $mode: the two ends do not join"
	expect_eq "pgbench -M $mode: exchanges joined" "$pairs" \
		"$($RECORDS "$WORK/$mode.json" --kind tcp --where side=client --count)"
done
