#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A connection opened before kmond started, served by a process that does
# not hold the listener: PostgreSQL forks a backend per connection and the
# backend closes the postmaster's listening socket. Named by the port, the
# backend is selected as a child of the listener (as one forked while
# kmond runs is, in the kernel), so psql's 20 queries on that connection
# are 20 tcp records under the service.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"

N=20
PORT=$(test_port)
start_postgres $PORT
sql() { psql -h 127.0.0.1 -p $PORT -U postgres -Atc "$1" 2>/dev/null; }
[ "$(sql 'select 1')" = 1 ] || fail "postgres does not answer: $(tail -3 "$WORK/postgres.log")"

# psql connects now and reads its queries from a fifo once kmond runs.
mkfifo "$WORK/queries"
exec 7<>"$WORK/queries"
PGAPPNAME=older psql -h 127.0.0.1 -p $PORT -U postgres -At <"$WORK/queries" \
	>"$WORK/psql.out" 2>&1 &
client=$!
STARTED_PIDS+=($client)
for ((i = 0; i < 100; i++)); do
	backend=$(sql "select pid from pg_stat_activity where application_name = 'older'")
	[ -n "$backend" ] && break
	sleep 0.1
done
[ -n "$backend" ] || fail "psql did not connect"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: db
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
for ((i = 1; i <= N; i++)); do echo "select $i;" >&7; done
echo '\q' >&7 # kmond holds the fifo too: psql would see no end of it
wait $client || fail "psql failed: $(tail -3 "$WORK/psql.out")"
exec 7>&-
expect_eq "answers psql printed" "$(wc -l <"$WORK/psql.out")" $N
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
got=$($RECORDS "$out" --kind tcp --where pid=$backend --count)
expect_eq "tcp records of the backend older than kmond" "$got" $N
services=$($RECORDS "$out" --kind tcp --where pid=$backend --values service | sort -u)
expect_eq "service of its records" "$services" db
