#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-topo merges the topology records of two nodes into one graph.
#
# The fleet: node-1 runs frontend, which calls cache (also on node-1) and
# api on node-2; api calls a database on a host nobody monitors. Each node
# reports what its kmond would: node-2 serves frontend -> api (it knows
# the client only by its address), node-1 sees the same calls as a client
# (and knows api only by its address), node-2 is api's client towards the
# database, node-1 serves frontend -> cache and sees it as a client too.
#
# FEEDERS: kcat producers publishing, interval by interval, the records
# each node would publish, client-side reports included (which kmond does
# not write today), so every case of the merge rule is pinned down here.
# node-2 runs a kmond with request outcomes (i errors of frontend -> api
# in interval i, 2i of api's calls to the database), node-1 one from
# before them: its edges have none.
# kafka_topo_nodes.sh runs the same merge on two real kmond instances.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

KMON_TOPO=$BUILD/kmon-topo
INTERVALS=3

# node_start NAME: publishes NAME's records for $INTERVALS intervals.
# Interval i: frontend -> api carries 100*i requests; the client end
# splits them differently across intervals (its clock is not the
# server's) but sees the same requests in total.
node_start() {
	local node=$1 i ts s c
	for ((i = 1; i <= INTERVALS; i++)); do
		ts=$((1795000000000000000 + i * 1000000000))
		s=$((100 * i))
		case $node-$i in
		node-1-1) c=99 ;; node-1-2) c=202 ;; *) c=$s ;;
		esac
		if [ "$node" = node-1 ]; then
			cat <<EOF
{"kind":"topology","ts":$ts,"node":"node-1","side":"client","src":"frontend","src_addr":"10.0.0.1","dst":"10.0.0.2:8080","requests":$c,"bytes":$((c * 500)),"latency_p50_ns":2600000,"latency_p95_ns":5200000,"latency_p99_ns":9100000}
{"kind":"topology","ts":$ts,"node":"node-1","src":"frontend","dst":"cache","requests":$((10 * i)),"bytes":$((10 * i * 64)),"latency_p50_ns":40000,"latency_p95_ns":60000,"latency_p99_ns":80000}
{"kind":"topology","ts":$ts,"node":"node-1","side":"client","src":"frontend","dst":"cache","requests":$((10 * i)),"bytes":$((10 * i * 64)),"latency_p50_ns":55000,"latency_p95_ns":75000,"latency_p99_ns":95000}
EOF
		else
			cat <<EOF
{"kind":"topology","ts":$ts,"node":"node-2","src":"10.0.0.1","dst":"api","dst_addr":"10.0.0.2:8080","requests":$s,"bytes":$((s * 500)),"latency_p50_ns":2000000,"latency_p95_ns":4000000,"latency_p99_ns":8000000,"protocol":"http","outcomes":$s,"errors":$i,"status_2xx":$((s - i)),"status_5xx":$i}
{"kind":"topology","ts":$ts,"node":"node-2","side":"client","src":"api","src_addr":"10.0.0.2","dst":"10.0.0.3:5432","requests":$((3 * s)),"bytes":$((3 * s * 200)),"latency_p50_ns":500000,"latency_p95_ns":900000,"latency_p99_ns":1500000,"protocol":"postgresql","outcomes":$((3 * s)),"errors":$((2 * i))}
EOF
		fi
	done | kcat -P -b "$BROKERS" -t kmon.topology -k "$node" \
		-H kind=topology -H "node=$node" ||
		fail "$node: kcat could not publish"
}
node_stop() { :; }

# What kmon-topo must show: one edge per call path, each request counted
# once (the server's figures where the server is monitored).
expected_edges() {
	local sum=0 errs=0 i
	for ((i = 1; i <= INTERVALS; i++)); do
		sum=$((sum + 100 * i)) errs=$((errs + i))
	done
	cat <<EOF
api -> 10.0.0.3:5432 client requests=$((3 * sum)) outcomes=$((3 * sum)) errors=$((2 * errs)) error_rate=$(rate $((2 * errs)) $((3 * sum))) server_nodes= client_nodes=node-2
frontend -> api server requests=$sum outcomes=$sum errors=$errs error_rate=$(rate $errs $sum) server_nodes=node-2 client_nodes=node-1
frontend -> cache server requests=$((10 * sum / 100)) outcomes=- errors=- error_rate=- server_nodes=node-1 client_nodes=node-1
EOF
}
# rate ERRORS OUTCOMES: as kmon-topo writes it (6 significant digits),
# read back by Python as edges_of reads it
rate() { python3 -c "print(float('%.6g' % ($1 / $2)))"; }
RECORDS_SENT=$((5 * INTERVALS))

# Prints the edges of the last snapshot in FILE as expected_edges does.
edges_of() {
	python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
g = json.loads(lines[-1])
for e in g["edges"]:
    print(f'{e["src"]} -> {e["dst"]} {e["side"]} requests={e["requests"]} '
          f'outcomes={e.get("outcomes", "-")} errors={e.get("errors", "-")} '
          f'error_rate={e.get("error_rate", "-")} '
          f'server_nodes={",".join(e["server_nodes"])} '
          f'client_nodes={",".join(e["client_nodes"])}')
PY
}

# last_field FILE FIELD: FIELD of the last snapshot (0 when none yet).
last_field() {
	tail -1 "$1" 2>/dev/null | python3 -c 'import json, sys
line = sys.stdin.read()
print(json.loads(line)[sys.argv[1]] if line else 0)' "$2"
}

# The CLI: usage errors and bad librdkafka properties exit 2.
"$KMON_TOPO" >/dev/null 2>&1
expect_eq "kmon-topo without -b" $? 2
out=$("$KMON_TOPO" -b 127.0.0.1:1 -X no.such.property=1 2>&1)
expect_eq "kmon-topo with a bad -X" "$? $out" '2 kmon-topo: No such configuration property: "no.such.property"'
"$KMON_TOPO" -b 127.0.0.1:1 --interval 1e3 >/dev/null 2>&1
expect_eq "kmon-topo --interval 1e3 (no exponents)" $? 2
# -i, --interval's old spelling, still works for one release, and says so.
"$KMON_TOPO" -b 127.0.0.1:1 -i 250ms -d 300ms --json "$WORK/old.json" 2>"$WORK/old.err"
expect_eq "exit code of kmon-topo -i" $? 0
grep -qx 'kmon-topo: -i is deprecated and will be removed in the next release; use --interval' \
	"$WORK/old.err" || fail "kmon-topo -i does not warn: $(head -3 "$WORK/old.err")"
[ -s "$WORK/old.json" ] || fail "kmon-topo -i 250ms -d 300ms wrote no snapshot"
echo "ok: kmon-topo -i still sets the interval, with a warning"

# librdkafka's mock coordinator waits for a member that left to time out
# before the group can rebalance: keep that short.
FAST_GROUP="-X session.timeout.ms=6000 -X heartbeat.interval.ms=1000"

start_broker -p 0
"$KMON_TOPO" -b "$BROKERS" -g topo-test-$$ --interval 0.5 $FAST_GROUP \
	--json "$WORK/topo.json" --dot "$WORK/graph.dot" 2>"$WORK/topo.err" &
topo=$!
STARTED_PIDS+=($topo)

node_start node-1
node_start node-2
echo '{"kind":"topology","ts":1,"node":"node-9","src":"x"}' |
	kcat -P -b "$BROKERS" -t kmon.topology || fail "kcat"
for ((i = 0; i < 150; i++)); do
	[ "$(last_field "$WORK/topo.json" records)" -ge $RECORDS_SENT ] && break
	sleep 0.1
done
node_stop node-1
node_stop node-2
sleep 0.6 # one more snapshot: nothing further arrives
kill -TERM $topo
wait $topo
expect_eq "kmon-topo exit code after SIGTERM" $? 0

expect_eq "records merged" "$(last_field "$WORK/topo.json" records)" $RECORDS_SENT
expect_eq "records rejected" "$(last_field "$WORK/topo.json" rejected)" 1
grep -q "rejected: dst: missing" "$WORK/topo.err" || fail "no reason for the bad record: $(cat "$WORK/topo.err")"
got=$(edges_of "$WORK/topo.json")
want=$(expected_edges)
[ "$got" = "$want" ] || fail "merged edges:
$got
want:
$want"
echo "ok: merged graph:"
echo "$got" | sed 's/^/    /'
snapshots=$(wc -l <"$WORK/topo.json")
[ "$snapshots" -ge 3 ] || fail "only $snapshots snapshots at 0.5 s"
echo "ok: $snapshots JSON snapshots"

# The DOT file: exactly these edges, and Graphviz reads it.
dot_edges=$(grep -- ' -> ' "$WORK/graph.dot" | sed 's/^\t//; s/ \[.*//' | tr -d '"')
expect_eq "DOT edges" "$dot_edges" "$(expected_edges | awk '{print $1, $2, $3}')"
grep -q '"api" -> "10.0.0.3:5432" \[.*style=dashed' "$WORK/graph.dot" ||
	fail "the client-only edge is not dashed"
grep -q '"frontend" -> "api" \[label=".*\\n1.0% errors", color=red' "$WORK/graph.dot" ||
	fail "frontend -> api does not show its error rate: $(grep -- '-> "api"' "$WORK/graph.dot")"
grep -q '"frontend" -> "cache" .*errors' "$WORK/graph.dot" &&
	fail "an edge without outcomes shows an error rate"
dot -Tsvg "$WORK/graph.dot" >"$WORK/graph.svg" || fail "dot cannot read graph.dot"
grep -q '<svg' "$WORK/graph.svg" || fail "dot made no SVG"
echo "ok: graph.dot renders"

# A consumer group: the same group resumes after what it read (only the
# record published since), a new group reads everything again.
echo '{"kind":"topology","ts":1795000009000000000,"node":"node-2","src":"10.0.0.1","dst":"api","requests":1}' |
	kcat -P -b "$BROKERS" -t kmon.topology -k node-2 || fail "kcat"
"$KMON_TOPO" -b "$BROKERS" -g topo-test-$$ --duration 9 $FAST_GROUP --json "$WORK/again.json" 2>/dev/null ||
	fail "kmon-topo --duration failed"
expect_eq "records for the same group again" "$(last_field "$WORK/again.json" records)" 1
"$KMON_TOPO" -b "$BROKERS" -g topo-other-$$ --duration 5 $FAST_GROUP --json "$WORK/other.json" 2>/dev/null ||
	fail "kmon-topo --duration failed"
expect_eq "records for a new group" "$(last_field "$WORK/other.json" records)" $((RECORDS_SENT + 1))
