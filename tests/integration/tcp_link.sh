#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Request paths on real kernel events: a middle service calls a back
# service for each request it serves (tests/lib/link_svc.py logs which
# call is whose). With a thread per request (persistent front
# connections, requests making no call, one call, three calls on three
# connections, two calls on one connection), every call record's parent
# is the id of the server record of the request it was made for, and its
# trace that request's trace; the same when the calls of a request are
# made at once by threads the serving thread starts for them (link
# "spawn"). With an event loop holding four requests at
# once, no call is linked (the thread serves several), and the stats
# records count them as unlinked; with requests coming and going at
# random, the calls it links (when it serves one alone, or by its
# handler: links "connect", "inline") are linked right. Ids are
# well-formed and unique.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/link_svc.sh"

CHECK="python3 $(dirname "$0")/../lib/link_check.py"
BASE=$(test_port 8)
MID_T=$BASE BACK_T=$((BASE + 1)) MID_A=$((BASE + 2)) BACK_A=$((BASE + 3))
MID_S=$((BASE + 4)) BACK_S=$((BASE + 5))
MID_E=$((BASE + 6)) BACK_E=$((BASE + 7))

start_svc back-t $LINK back --port $BACK_T
start_svc back-a $LINK back --port $BACK_A
start_svc back-s $LINK back --port $BACK_S
start_svc back-e $LINK back --port $BACK_E
start_svc mid-t $LINK mid --port $MID_T --back $BACK_T --mode threads \
	--log "$WORK/mid-t.log"
start_svc mid-a $LINK mid --port $MID_A --back $BACK_A --mode asyncio \
	--gather 4 --log "$WORK/mid-a.log"
start_svc mid-e $LINK mid --port $MID_E --back $BACK_E --mode asyncio \
	--log "$WORK/mid-e.log"
start_svc mid-s $LINK mid --port $MID_S --back $BACK_S --mode spawn \
	--log "$WORK/mid-s.log"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: mid-t, match: { port: $MID_T } }
  - { name: mid-a, match: { port: $MID_A } }
  - { name: mid-s, match: { port: $MID_S } }
  - { name: mid-e, match: { port: $MID_E } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

# 4 connections x 6 requests, each shape 6 times: 36 calls.
got=$($LINK front --port $MID_T --conns 4 --per-conn 6 --shapes 1:0,3:0,0:0,2:1)
expect_eq "requests answered by the thread-per-request service" "$got" 24
got=$($LINK front --port $MID_S --conns 4 --per-conn 6 --shapes 1:0,3:0,0:0,2:1)
expect_eq "requests answered by the service that starts threads" "$got" 24
# 4 connections, one request each in every round of 4 in flight.
got=$($LINK front --port $MID_A --conns 4 --per-conn 5 --shapes 1:0)
expect_eq "requests answered by the event loop" "$got" 20
# 3 connections at once, no rounds: one request or several in flight.
got=$($LINK front --port $MID_E --conns 3 --per-conn 8 --shapes 1:0,2:1,0:0,3:0)
expect_eq "requests answered by the free event loop" "$got" 24
wait_served $MID_T $BACK_T $MID_S $BACK_S $MID_A $BACK_A $MID_E $BACK_E
sleep 0.3 # the last closes of those, in softirq
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
expect_eq "calls logged by mid-t" "$(grep -c ^CALL "$WORK/mid-t.log")" 36
$CHECK "$out" "$WORK/mid-t.log" --mid-port $MID_T --back-port $BACK_T \
	--service mid-t --expect linked || fail "thread per request"
$CHECK "$out" "$WORK/mid-s.log" --mid-port $MID_S --back-port $BACK_S \
	--service mid-s --expect linked --link spawn || fail "threads started per call"
$CHECK "$out" "$WORK/mid-a.log" --mid-port $MID_A --back-port $BACK_A \
	--service mid-a --expect unlinked || fail "event loop"
$CHECK "$out" "$WORK/mid-e.log" --mid-port $MID_E --back-port $BACK_E \
	--service mid-e --expect right --link thread,connect,inline ||
	fail "free event loop"
echo "ok"
