#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A reload that changes the sinks (a file sink added) and the services
# while the broker is down: the Kafka sink, configured alike, keeps running
# with its queue, and delivers every record once the broker returns.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_one"
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_two"
start_broker -p 0
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: one
    match: { comm: kmt_one }
$1
collectors:
  syscall: { syscalls: [getppid] }
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "$BROKERS", flush_timeout: 20s }
$2
YAML
}
write_config "" ""
start_kmond "$WORK/kmond.yaml"
"$WORK/kmt_one" 100
sleep 0.5
broker_cmd "down all"
"$WORK/kmt_one" 200
sleep 0.5
write_config "  - name: two
    match: { comm: kmt_two }" "  - { type: file, path: \"$WORK/second.json\" }"
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "not reloaded"
"$WORK/kmt_two" 300
sleep 0.5
queued=$(tail -1 "$WORK/second.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["queued"])')
[ "$queued" -ge 3 ] || fail "nothing queued during the outage ($queued)"
echo "ok: $queued records queued across the reload"
broker_cmd "up all"
sleep 2
stop_kmond

files=()
for kind in syscall stats; do
	consume "kmon.$kind" "$WORK/$kind.kcat"
	files+=("$WORK/$kind.kcat")
done
$KAFKA_MSGS same "$WORK/out.json" "${files[@]}" || fail "file sink and kafka differ"
echo "ok: kafka holds exactly the first file sink's records"
expect_eq "one" "$($RECORDS "$WORK/out.json" --kind syscall --where service=one --sum count)" 300
expect_eq "two" "$($RECORDS "$WORK/out.json" --kind syscall --where service=two --sum count)" 300
