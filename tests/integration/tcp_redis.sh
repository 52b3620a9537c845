#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Redis (one event-loop thread serving every connection) under
# redis-benchmark: one tcp record per command, exactly as many as Redis
# itself says it processed (INFO's total_commands_processed), each
# response at least as large as the RESP reply the command gets.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"

PORT=$(test_port)
N=3000
start_redis $PORT
redis=$REDIS_PID
calls() { # COMMAND: how many Redis processed, by its own count
	redis-cli -p $PORT info commandstats | tr -d '\r' |
		sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p"
}
[ -n "$(calls ping)" ] || fail "redis did not start: $(tail -3 "$WORK/redis.log")"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: cache
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

# Four clients on four connections, no pipelining: N SETs, then N GETs.
redis-benchmark -p $PORT -c 4 -n $N -t set,get -q >"$WORK/bench.out" ||
	fail "redis-benchmark failed"
cat "$WORK/bench.out" | tr '\r' '\n' | grep -v '^$' | tail -2
sets=$(calls set) gets=$(calls get)
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
expect_eq "SET and GET calls" "$sets $gets" "$N $N"
# Per connection: the benchmark's 8 (4 for SET, then 4 for GET) carry one
# request per command; its first one sends two CONFIG GETs in one write
# (one request: the next bytes come only after both answers), and each
# redis-cli INFO after kmond started is one.
python3 - "$out" $redis $((sets + gets)) <<'PY' || fail "records per connection"
import collections, json, sys
out, pid, commands = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_conn = collections.Counter(
    r["rport"] for r in map(json.loads, open(out))
    if r["kind"] == "tcp" and r["pid"] == pid)
busy = sorted(n for n in per_conn.values() if n > 1)
if len(busy) != 8 or sum(busy) != commands:
    sys.exit(f"benchmark connections carried {busy}, want 8 adding to {commands}")
rest = len(per_conn) - len(busy)
if rest != 3:  # the CONFIG GET pair, the two INFOs above
    sys.exit(f"{rest} one-request connections, want 3: {per_conn}")
print(f"ok: {commands} SET/GET commands = records on the 8 benchmark "
      f"connections, + 3 one-request connections")
PY
got=$($RECORDS "$out" --kind topology --where dst=cache --sum requests)
expect_eq "requests on the topology edges to redis" "$got" $((sets + gets + 3))
tids=$($RECORDS "$out" --kind tcp --where pid=$redis --values tid | sort -u)
expect_eq "threads that received them (one event loop)" "$tids" "$redis"
# "+OK\r\n" is the smallest reply (5 bytes), a SET the smallest request.
small=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)]
          if r["kind"] == "tcp" and r["pid"] == int(sys.argv[2])
          and (r["resp_bytes"] < 5 or r["req_bytes"] < 14 or r["latency_ns"] <= 0)))' "$out" $redis)
expect_eq "records with too few bytes or no latency" "$small" 0
