#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# redis-benchmark monitored, Redis not: one client-side record per
# command the benchmark sent, exactly as many as Redis says it processed
# (INFO commandstats), and the calls together at least as long as Redis's
# own time for them (commandstats usec: it cannot answer before it has
# worked).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"
source "$(dirname "$0")/../lib/caller.sh"

PORT=$(test_port)
N=2000
start_redis $PORT
stat() { # COMMAND FIELD: Redis's own count of calls or usec
	redis-cli -p $PORT info commandstats | tr -d '\r' |
		awk -v cmd="cmdstat_$1" -v key="$2" -F '[:,=]' \
			'$1 == cmd { for (i = 2; i < NF; i += 2) if ($i == key) print $(i + 1) }'
}
[ -n "$(stat ping calls)" ] || fail "redis did not start: $(tail -3 "$WORK/redis.log")"
start_caller

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: bench, match: { pid: $CALLER_PID } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # one interval: the caller is selected

# Four connections, no pipelining: N SETs, then N GETs.
in_caller bench redis-benchmark -p $PORT -c 4 -n $N -t set,get -q
sets=$(stat set calls) gets=$(stat get calls)
usec=$(($(stat set usec) + $(stat get usec)))
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
expect_eq "SET and GET calls Redis processed" "$sets $gets" "$N $N"
# The benchmark's 8 connections (4 for SET, then 4 for GET) carry one call
# per command; its first one sends two CONFIG GETs in one write (one
# call: it sends again only after both answers).
python3 - "$out" $PORT $((sets + gets)) $usec <<'PY' || fail "client records"
import collections, json, sys
out, port, commands, usec = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
recs = [r for r in map(json.loads, open(out))
        if r["kind"] == "tcp" and r["rport"] == port]
if any(r["side"] != "client" for r in recs):
    sys.exit("a server-side record: Redis is not monitored")
per_conn = collections.Counter(r["lport"] for r in recs)
busy = sorted(n for n in per_conn.values() if n > 1)
if len(busy) != 8 or sum(busy) != commands:
    sys.exit(f"benchmark connections carried {busy}, want 8 adding to {commands}")
if len(per_conn) != 9:
    sys.exit(f"{len(per_conn)} connections, want 9: {per_conn}")
waited = sum(r["latency_ns"] for r in recs if per_conn[r["lport"]] > 1)
if waited < usec * 1000:
    sys.exit(f"the calls took {waited} ns, Redis worked {usec} us on them")
print(f"ok: {commands} calls on 8 connections, 1 CONFIG GET call; "
      f"waited {waited // 1000} us for Redis's {usec} us of work")
PY
expect_eq "dst of every record" "$($RECORDS "$out" --kind tcp --values dst | sort -u)" 127.0.0.1
