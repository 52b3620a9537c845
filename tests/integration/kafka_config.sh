#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kafka settings librdkafka would refuse are config errors with
# file:line:col, from kmond --check, at start-up and on SIGHUP (where the
# running Kafka sink keeps delivering).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

# check_error NAME WANT: kmond --check on $WORK/NAME.yaml exits 2 with WANT.
check_error() {
	local out rc
	out=$("$KMOND" -c "$WORK/$1.yaml" --check 2>&1)
	rc=$?
	expect_eq "exit code of --check ($1)" $rc 2
	expect_eq "--check message ($1)" "$out" "$WORK/$1.yaml:$2"
}

cat >"$WORK/unknown.yaml" <<'YAML'
exporters:
  - type: kafka
    brokers: "127.0.0.1:9092"
    properties:
      linger.ms: "5"
      no.such.property: "1"
YAML
check_error unknown '6:7: properties: No such configuration property: "no.such.property"'

cat >"$WORK/value.yaml" <<'YAML'
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "b:9092", properties: { compression.codec: zstandard } }
YAML
out=$("$KMOND" -c "$WORK/value.yaml" --check 2>&1)
expect_eq "exit code of --check (value)" $? 2
[[ "$out" == "$WORK/value.yaml:3:53: properties: Invalid value \"zstandard\" for configuration property \"compression.codec\""* ]] ||
	fail "--check message (value): $out"
echo "ok: --check message (value) = $out"

cat >"$WORK/drop.yaml" <<'YAML'
exporters:
  - { type: kafka, brokers: "b:9092", drop: sideways }
YAML
check_error drop "2:45: drop: expected oldest or newest"

cat >"$WORK/good.yaml" <<'YAML'
exporters:
  - type: kafka
    brokers: "127.0.0.1:9092"
    topic_prefix: "fleet."
    drop: newest
    queue_messages: 5000
    queue_bytes: 1048576
    flush_timeout: 3s
    properties: { linger.ms: "20", compression.type: lz4, client.id: kmond-test }
YAML
out=$("$KMOND" -c "$WORK/good.yaml" --check 2>&1)
expect_eq "exit code of --check (good)" $? 0
expect_eq "--check output (good)" "$out" "$WORK/good.yaml: ok"

out=$("$KMOND" -c configs/kafka-demo.yaml --check 2>&1)
expect_eq "--check on configs/kafka-demo.yaml" "$out" "configs/kafka-demo.yaml: ok"

# SIGHUP with a bad property: refused with file:line:col, and the Kafka
# sink that was running keeps delivering. Then a good change: a new
# producer, and the stats go on from the old one's totals.
start_broker -p 0
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
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
    properties: { $1 }
YAML
}
write_config 'linger.ms: "5"'
start_kmond "$WORK/kmond.yaml"
write_config 'linger.ms: "5", batch.size: lots'
kill -HUP "$KMOND_PID"
wait_for_log "reload refused" 5 || fail "the bad reload was not refused"
grep -q "^kmond: error: $WORK/kmond.yaml:11:35: properties: Invalid value for configuration property \"batch.size\"" \
	"$WORK/kmond.err" || fail "no file:line:col for the bad reload"
echo "ok: reload refused: $(grep -m1 "batch.size" "$WORK/kmond.err")"
"$WORK/kmt_getppid" 777 &
pid=$!
wait $pid
sleep 0.6
write_config 'linger.ms: "10"'
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" 5 || fail "the good reload was not applied"
"$WORK/kmt_getppid" 555 &
pid2=$!
wait $pid2
sleep 0.6
stop_kmond
consume kmon.syscall "$WORK/syscall.kcat"
$KAFKA_MSGS payloads "$WORK/syscall.kcat" >"$WORK/syscall.json"
got=$($RECORDS "$WORK/syscall.json" --kind syscall --where pid=$pid --sum count)
expect_eq "getppid count delivered after the refused reload" "$got" 777
got=$($RECORDS "$WORK/syscall.json" --kind syscall --where pid=$pid2 --sum count)
expect_eq "getppid count delivered by the new producer" "$got" 555
# records and delivered never go back, across the producer swap.
python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"kind\":\"stats\"" in l]
for a, b in zip(s, s[1:]):
    for k in ("records", "delivered"):
        if b[k] < a[k]:
            sys.exit(f"{k} went from {a[k]} to {b[k]}")
print("ok: %d stats records, delivered rises to %d" % (len(s), s[-1]["delivered"]))' \
	"$WORK/out.json" || fail "stats reset by the reload"
