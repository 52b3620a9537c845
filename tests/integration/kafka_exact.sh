#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A selected process calling getppid exactly N times, with both a file sink
# and a Kafka sink: kmon.syscall holds its records with counts summing to
# exactly N, each keyed by its service with kind/node headers, and the
# messages are byte for byte the file sink's lines (every kind).
# (Uses the syscall collector; once the tcp collector exists, N requests
# to a selected server -> N messages on kmon.tcp belongs here too.)
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

N=23456
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
start_broker -p 0
cat >"$WORK/kmond.yaml" <<YAML
node: kafka-node-1
interval: 200ms
services:
  - name: probe-svc
    match: { comm: kmt_getppid }
collectors:
  syscall: { syscalls: [getppid] }
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
sleep 0.6 # three intervals
stop_kmond
grep -q "records not delivered" "$WORK/kmond.err" && fail "kmond gave up on records"

consume kmon.syscall "$WORK/syscall.kcat"
consume kmon.stats "$WORK/stats.kcat"
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
