#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact total of comm kmt_getppid, which other tests run
# The broker goes down for 5 s in the middle of steady traffic: records
# queue (the stats records show it) and are delivered when it returns.
# Nothing is lost: Kafka ends up with exactly the file sink's records,
# the getppid counts add up to every call made, and failed stays 0.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

RUNS=36 # one kmt_getppid every 0.25 s: ~9 s of traffic
CALLS=1000
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
start_broker -p 0
cat >"$WORK/kmond.yaml" <<YAML
node: outage-node
interval: 200ms
services:
  - name: probe-svc
    match: { comm: kmt_getppid }
collectors:
  syscall: { syscalls: [getppid] }
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "$BROKERS", topic_prefix: "kmon.", flush_timeout: 20s }
YAML
start_kmond "$WORK/kmond.yaml"

pids=()
for ((i = 0; i < RUNS; i++)); do
	case $i in
	8) broker_cmd "down all" && echo "broker down" ;;
	28) broker_cmd "up all" && echo "broker up" ;;
	esac
	"$WORK/kmt_getppid" $CALLS &
	pids+=($!)
	wait $!
	sleep 0.25
done
sleep 0.5
stop_kmond
grep -q "records not delivered" "$WORK/kmond.err" && fail "kmond gave up on records"

# The outage was real: records waited in the queue.
max_queued=$($RECORDS "$WORK/out.json" --kind stats --values queued | sort -n | tail -1)
[ "$max_queued" -ge 10 ] || fail "no records queued during the outage (max $max_queued)"
echo "ok: up to $max_queued records queued during the outage"
failed=$($RECORDS "$WORK/out.json" --kind stats --values failed | sort -n | tail -1)
expect_eq "failed in the last stats record" "$failed" 0
lost=$(python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"kind\":\"stats\"" in l]
print(max(r["lost"]["queue"] for r in s), max(r["lost"]["sink"] for r in s))' "$WORK/out.json")
expect_eq "lost.queue and lost.sink" "$lost" "0 0"

files=()
for kind in $($RECORDS "$WORK/out.json" --values kind | sort -u); do
	consume "kmon.$kind" "$WORK/$kind.kcat"
	files+=("$WORK/$kind.kcat")
done
$KAFKA_MSGS same "$WORK/out.json" "${files[@]}" || fail "file sink and kafka differ"
echo "ok: kafka holds exactly the file sink's records"

# Per process: every one of its calls is on kmon.syscall (one pass).
$KAFKA_MSGS payloads "$WORK/syscall.kcat" >"$WORK/syscall.json"
bad=$(python3 -c 'import collections, json, sys
n = collections.Counter()
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["kind"] == "syscall" and r["syscall"] == "getppid":
        n[r["pid"]] += r["count"]
for pid in sys.argv[3:]:
    if n[int(pid)] != int(sys.argv[2]):
        print(f"pid {pid}: {n[int(pid)]}")
print("total", sum(n.values()))' "$WORK/syscall.json" $CALLS "${pids[@]}")
expect_eq "getppid calls on kmon.syscall" "$bad" "total $((RUNS * CALLS))"
