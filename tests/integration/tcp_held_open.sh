#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: every record out 0.7 s after the last answer
# A connection kept open after its last request (an interactive redis-cli,
# connected before kmond started): its 20 PINGs are 20 tcp records on each
# side and 20 requests on the topology edge while it stays open. A request
# is finished by the next one or the close; the last one, answered and
# quiet for an interval, is finished by the sweep within 2 intervals (it
# waited for the close, and was lost when kmond stopped first: 19 of 20).
# probe_no_iter.sh runs it with iterators refused (the sweep then runs
# over the connection hash).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/servers.sh"

N=20
PORT=$(test_port)
start_redis $PORT

# redis-cli connects now and reads its commands from a fifo.
mkfifo "$WORK/commands"
exec 7<>"$WORK/commands"
redis-cli -p $PORT <"$WORK/commands" >"$WORK/cli.out" 2>&1 &
client=$!
STARTED_PIDS+=($client)
for ((i = 0; i < 50; i++)); do
	# itself and the one asking
	[ "$(redis-cli -p $PORT info clients | tr -d '\r' |
		sed -n 's/^connected_clients://p')" -ge 2 ] && break
	sleep 0.1
done

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: cache
    match: { port: $PORT }
  - name: caller
    match: { pid: $client }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
for ((i = 0; i < N; i++)); do echo PING >&7; done
for ((i = 0; i < 50; i++)); do
	[ "$(grep -c PONG "$WORK/cli.out")" -ge $N ] && break
	sleep 0.1
done
expect_eq "answers redis-cli printed" "$(grep -c PONG "$WORK/cli.out")" $N
# Recorded within 2 intervals of the last answer, the connection still
# open (the run that finished it ends the interval after it went quiet).
sleep 0.7
expect_eq "server records 2 intervals after the last answer" \
	"$($RECORDS "$WORK/out.json" --kind tcp --where service=cache --count)" $N
sleep 0.5 # quiet for a few intervals, still open
stop_kmond
exec 7>&- # now redis-cli sees the end of its input

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
expect_eq "server records" "$($RECORDS "$out" --kind tcp --where service=cache --count)" $N
expect_eq "client records" "$($RECORDS "$out" --kind tcp --where service=caller --count)" $N
expect_eq "requests on the topology edge caller -> cache" \
	"$($RECORDS "$out" --kind topology --where src=caller --where dst=cache --sum requests)" $N
