#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: client and server pinned to CPUs 0 and 1, 20000 races
# A request ends once, even when its answer and the client's reset come
# at the same moment on two CPUs: kmt_reset's clients send a request and
# reset the connection a few microseconds later, around the moment the
# server answers. The server's answer ends the request (load_sent), the
# reset ends it too (load_closed, in the softirq on the client's CPU);
# whichever comes second must find it ended. Counted twice, the server's
# load would read fewer than no requests in progress: kmond would drop
# its sums (loads_broken in the stats record) and its later intervals
# would not add up; begun on a connection whose close has passed, it
# would stay in progress for good. So: no load broken, nothing in
# progress once every connection has closed, and at least as many
# arrivals as requests answered, no more than requests read. Request
# paths count the requests each thread serves: none once all closed.
source "$(dirname "$0")/../lib/kmond.sh"

[ "$(nproc)" -ge 2 ] || skip "one CPU: the answer and the reset cannot race on two"
PORT=$(test_port)
N=${N:-20000}
# the server before kmond, so that it is selected from the first call
$BUILD/tests/kmt_reset serve "$PORT" >"$WORK/server.out" &
SERVER=$!
STARTED_PIDS+=($SERVER)
for _ in $(seq 50); do grep -q ready "$WORK/server.out" && break; sleep 0.1; done
grep -q ready "$WORK/server.out" || fail "the server did not start"
cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: reset
    match: { port: $PORT }
collectors:
  tcp: { enabled: true, requests: none }
YAML
start_kmond "$WORK/kmond.yaml"
$BUILD/tests/kmt_reset call "$PORT" "$N" || fail "the calls failed"
sleep 0.6 # the server's last connection ends; two more intervals
# request paths: the server's thread serves nothing now (a request whose
# count no release reached would leave its later calls unlinked)
serving=$(map_dump "$KMOND_PID" threads | python3 -c '
import json, sys
tid = int(sys.argv[1])
mine = [e["formatted"]["value"]["serving"] for e in json.load(sys.stdin)
        if e["formatted"]["key"] == tid]
print(sum(mine) if mine else "no entry")' "$SERVER")
kill -TERM $SERVER
wait $SERVER || fail "the server failed"
read -r _ reads _ answered < <(tail -1 "$WORK/server.out")
echo "the server read $reads requests and answered $answered, of $N"
# the race this test is for: resets that came before the answer
[ "$reads" -gt "$answered" ] || fail "every request read was answered: no reset raced an answer"
stop_kmond

broken=$($RECORDS "$WORK/out.json" --kind stats --values collectors.tcp.loads_broken | sort -n | tail -1)
expect_eq "loads found below zero in progress" "$broken" 0
arrivals=$($RECORDS "$WORK/out.json" --kind load --where service=reset --sum arrivals)
completions=$($RECORDS "$WORK/out.json" --kind load --where service=reset --sum completions)
last=$($RECORDS "$WORK/out.json" --kind load --where service=reset --values in_progress | tail -1)
echo "load records: $arrivals arrivals, $completions completions"
[ "$arrivals" -le "$reads" ] && [ "$completions" -le "$arrivals" ] ||
	fail "more arrivals ($arrivals) or completions ($completions) than requests read ($reads)"
# an answer sent in full: its connection was open, without an error,
# when the request was read (so kmond counted it)
[ "$arrivals" -ge "$answered" ] || fail "only $arrivals arrivals of $answered requests answered"
expect_eq "requests in progress at the end" "$last" 0
expect_eq "requests the server's thread still serves" "$serving" 0
