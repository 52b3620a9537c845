#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The shipped configs/kmond.yaml, unchanged (no services: every process
# is monitored), against real Debian servers and their Debian clients:
# nginx (curl), redis (redis-cli) and PostgreSQL (psql), each on a random
# port. Every server-side tcp record of theirs names its protocol, and
# each server has an endpoint record with it. (With no services, the
# capture programs used to run in no cgroup, and every connection of a
# protocol whose client speaks first read "unknown".)
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_protocols
N=5
P=$(test_port 3)
HTTP=$P REDIS=$((P + 1)) PG=$((P + 2))
start_nginx $HTTP 1
start_redis $REDIS
start_postgres $PG

cp "$(dirname "$0")/../../configs/kmond.yaml" "$WORK/kmond.yaml"
start_kmond "$WORK/kmond.yaml"
for ((i = 0; i < N; i++)); do
	curl -s "http://127.0.0.1:$HTTP/text" >/dev/null || fail "curl failed"
	redis-cli -p $REDIS set key$i value >/dev/null || fail "redis-cli failed"
	psql -h 127.0.0.1 -p $PG -U postgres -Atc "select $i" >/dev/null ||
		fail "psql failed"
done
sleep 2.5 # two intervals: every request recorded, endpoints reported
stop_kmond

out=$WORK/out.json
for want in "$HTTP http" "$REDIS redis" "$PG postgresql"; do
	port=${want% *} proto=${want#* }
	n=$($RECORDS "$out" --kind tcp --where side=server --where lport=$port --count)
	[ "${n:-0}" -ge $N ] || fail "$proto: $n server records on port $port, want $N or more"
	got=$($RECORDS "$out" --kind tcp --where side=server --where lport=$port --values protocol | sort -u | tr '\n' ' ')
	expect_eq "protocols of the server records on $port" "$got" "$proto "
	got=$($RECORDS "$out" --kind endpoint --where port=$port --values protocol | sort -u | tr '\n' ' ')
	expect_eq "protocol of the endpoint on $port" "$got" "$proto "
done
