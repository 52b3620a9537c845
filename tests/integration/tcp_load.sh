#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: occupancy within -5%/+3% of the servers' own spans
# Measured load (`load` records): two loopback servers with known service
# times, one kept busy by 4 clients that ask again at once (up to 4
# requests in progress), one by a single client that pauses 30 ms after
# each 20 ms request (busy about 40% of the time). Arrivals and
# completions are exact, occupancy x interval adds up to the latencies
# and to the servers' own spans, busy time to the union of those spans,
# Little's law holds per interval, and the concurrency is what the
# clients make. The clients are monitored too (service callers): the
# load of each endpoint they call, from their side, checks the same way.
# Also run on the syscall fallback by tcp_fallback.sh.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

CHECK="python3 $(dirname "$0")/../lib/load_check.py"
PORT=$(test_port 2)

start_svc busy $SVC server --port $PORT --spans "$WORK/busy.spans"
start_svc paced $SVC server --port $((PORT + 1)) --spans "$WORK/paced.spans"
# the clients' python under a name of its own (comm: the name it runs by)
ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" \
	"$WORK/kmon-callers"
CALLER="$WORK/kmon-callers $(dirname "$0")/../lib/tcp_svc.py"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: busy
    match: { port: $PORT }
  - name: paced
    match: { port: $((PORT + 1)) }
  - name: callers
    match: { comm: kmon-callers }
collectors:
  tcp: { enabled: true, requests: none }
YAML
start_kmond "$WORK/kmond.yaml"

$CALLER client --port $PORT --conns 4 --ms 20 --repeat 100 >"$WORK/busy.n" &
busy=$!
STARTED_PIDS+=($busy)
n_paced=$($CALLER client --port $((PORT + 1)) --ms 20 --think 30 --repeat 40)
wait $busy || fail "the busy clients failed"
n_busy=$(cat "$WORK/busy.n")
sleep 1.2 # two intervals: every request is reported
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
$CHECK "$out" --service busy --requests "$n_busy" --conns 4 \
	--spans "$WORK/busy.spans" || fail "load of the busy server"
$CHECK "$out" --service paced --requests "$n_paced" --conns 1 \
	--spans "$WORK/paced.spans" || fail "load of the paced server"
$CHECK "$out" --endpoint 127.0.0.1:$PORT --requests "$n_busy" --conns 4 \
	--spans "$WORK/busy.spans" || fail "client-side load of the busy server"
$CHECK "$out" --endpoint 127.0.0.1:$((PORT + 1)) --requests "$n_paced" \
	--conns 1 --spans "$WORK/paced.spans" ||
	fail "client-side load of the paced server"
echo "PASS"
