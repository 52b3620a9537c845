#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A Kafka sink pointed at a loopback port nobody listens on: kmond starts,
# says clearly (once, not at every reconnect) that the broker refuses
# connections, the file sink keeps every record, and SIGTERM still exits
# 0 within the flush timeout, reporting what could not be delivered.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"

N=4321
PORT=$(test_port)
cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_getppid"
cat >"$WORK/kmond.yaml" <<YAML
node: lonely-node
interval: 200ms
services:
  - name: probe-svc
    match: { comm: kmt_getppid }
collectors:
  syscall: { syscalls: [getppid] }
exporters:
  - { type: kafka, brokers: "127.0.0.1:$PORT", flush_timeout: 1s }
  - { type: file, path: "-" }
YAML
start_kmond "$WORK/kmond.yaml"

wait_for_log "kmond: kafka: 127.0.0.1:$PORT: .*Connection refused" 5 ||
	fail "no clear error about the unreachable broker"
echo "ok: $(grep -m1 "Connection refused" "$WORK/kmond.err")"

"$WORK/kmt_getppid" $N &
pid=$!
wait $pid
sleep 1.5
start=$(date +%s%N)
stop_kmond
stop_ms=$((($(date +%s%N) - start) / 1000000))
[ $stop_ms -lt 4000 ] || fail "SIGTERM took $stop_ms ms with flush_timeout 1s"
echo "ok: exited 0, $stop_ms ms after SIGTERM"

# The file sink did not notice.
got=$($RECORDS "$WORK/out.json" --kind syscall --where pid=$pid --sum count)
expect_eq "getppid count in the file sink" "$got" $N
stats=$($RECORDS "$WORK/out.json" --kind stats --count)
[ "$stats" -ge 8 ] || fail "only $stats stats records in 2 s at 200ms"
echo "ok: $stats stats records kept coming"
queued=$($RECORDS "$WORK/out.json" --kind stats --values queued | tail -1)
[ "$queued" -ge "$stats" ] || fail "the last stats record shows $queued queued"
echo "ok: $queued records queued for the absent broker"

# One line per error, not one per reconnect (~10 reconnects in 2 s).
refused=$(grep -c "Connection refused" "$WORK/kmond.err")
[ "$refused" -le 2 ] || fail "$refused 'Connection refused' lines"
grep -q "kmond: kafka: 127.0.0.1:$PORT: [0-9]* records not delivered" "$WORK/kmond.err" ||
	fail "no report of the undelivered records"
echo "ok: $(grep "records not delivered" "$WORK/kmond.err")"
