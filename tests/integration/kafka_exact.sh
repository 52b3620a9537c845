#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A selected process calling getppid exactly N times, with both a file sink
# and a Kafka sink: kmon.syscall holds its records with counts summing to
# exactly N, each keyed by its service with kind/node headers, and the
# messages are byte for byte the file sink's lines (every kind).
# R requests to a selected loopback server give exactly R messages on
# kmon.tcp, keyed by the server's service.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/kafka.sh"

N=23456
R=300
PORT=$(test_port)
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
start_broker -p 0
start_svc web $SVC server --port "$PORT"
web=$SVC_PID
cat >"$WORK/kmond.yaml" <<YAML
node: kafka-node-1
interval: 200ms
services:
  - name: probe-svc
    match: { comm: kmt_getppid }
  - name: web
    match: { port: $PORT }
collectors:
  syscall: { syscalls: [getppid] }
  tcp: { enabled: true }
exporters:
  - { type: file, path: "-" }
  - type: kafka
    brokers: "$BROKERS"
    topic_prefix: "kmon."
    properties: { linger.ms: "5" }
YAML
start_kmond "$WORK/kmond.yaml"

"$WORK/kmt_getppid" $N &
pid=$!
wait $pid
got=$($SVC client --port "$PORT" --ms 0 --repeat $((R - 20)))
got=$((got + $($SVC client --port "$PORT" --ms 0 --repeat 20 --mode short)))
expect_eq "requests answered" "$got" $R
sleep 0.6 # three intervals
stop_kmond
grep -q "records not delivered" "$WORK/kmond.err" && fail "kmond gave up on records"

consume kmon.syscall "$WORK/syscall.kcat"
consume kmon.stats "$WORK/stats.kcat"
consume kmon.tcp "$WORK/tcp.kcat"
$KAFKA_MSGS payloads "$WORK/syscall.kcat" >"$WORK/syscall.json"

got=$($RECORDS "$WORK/syscall.json" --kind syscall --where pid=$pid --where syscall=getppid --sum count)
expect_eq "sum of count on kmon.syscall for pid $pid" "$got" $N
msgs=$($RECORDS "$WORK/syscall.json" --kind syscall --where pid=$pid --count)
[ "$msgs" -ge 1 ] || fail "no kmon.syscall message for pid $pid"
keys=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if json.loads(e["payload"]).get("pid") == int(sys.argv[2]): print(e["key"])' \
	"$WORK/syscall.kcat" $pid | sort -u)
expect_eq "message key of its records" "$keys" probe-svc

n=$($KAFKA_MSGS check "$WORK/syscall.kcat" --kind syscall --node kafka-node-1) ||
	fail "kmon.syscall: $n"
echo "ok: $n kmon.syscall messages: kind/node headers and keys match their records"
$KAFKA_MSGS payloads "$WORK/tcp.kcat" >"$WORK/tcp.json"
expect_eq "kmon.tcp messages of the web server" \
	"$($RECORDS "$WORK/tcp.json" --kind tcp --where pid=$web --count)" $R
n=$($KAFKA_MSGS check "$WORK/tcp.kcat" --kind tcp --node kafka-node-1) ||
	fail "kmon.tcp: $n"
# keyed by the exchange (checked above); the service in a header
services=$(python3 -c 'import json,sys
h = lambda e: dict(zip(e["headers"][0::2], e["headers"][1::2]))
print("\n".join(sorted({h(json.loads(l))["service"] for l in open(sys.argv[1])})))' "$WORK/tcp.kcat")
expect_eq "service headers on kmon.tcp" "$services" web
n=$($KAFKA_MSGS check "$WORK/stats.kcat" --kind stats --node kafka-node-1) ||
	fail "kmon.stats: $n"
[ "$n" -ge 3 ] || fail "only $n stats messages"
echo "ok: $n kmon.stats messages"

# The same records, the same bytes, in both sinks, whatever their kind.
files=()
for kind in $($RECORDS "$WORK/out.json" --values kind | sort -u); do
	consume "kmon.$kind" "$WORK/all.$kind.kcat"
	files+=("$WORK/all.$kind.kcat")
done
$KAFKA_MSGS same "$WORK/out.json" "${files[@]}" || fail "file sink and kafka differ"
echo "ok: kafka values == file sink lines"
