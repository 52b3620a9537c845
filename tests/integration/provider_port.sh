#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The `port` selector names the process listening on that port, also one
# that starts listening after kmond: its requests carry the service; a
# server on another port and the client are not selected.
source "$(dirname "$0")/../lib/kmond.sh"

SVC="python3 $(dirname "$0")/../lib/tcp_svc.py"
PORT=$(test_port)
OTHER=$((PORT + 1))
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: by-port, match: { port: $PORT } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

for p in $PORT $OTHER; do
	$SVC server --port $p --ready "$WORK/$p.up" &
	STARTED_PIDS+=($!)
	eval "pid_$p=$!"
	for _ in $(seq 50); do [ -e "$WORK/$p.up" ] && break; sleep 0.1; done
done
sleep 0.8 # the listen list is read each interval
$SVC client --port $PORT --ms 1 --repeat 5 >/dev/null
$SVC client --port $OTHER --ms 1 --repeat 5 >/dev/null
sleep 0.7
stop_kmond

out=$WORK/out.json
got=$($RECORDS "$out" --kind tcp --where pid=$(eval echo \$pid_$PORT) --where service=by-port --count)
expect_eq "requests to the listener on $PORT under its service" "$got" 5
got=$($RECORDS "$out" --kind tcp --where pid=$(eval echo \$pid_$OTHER) --count)
expect_eq "records of the server on another port" "$got" 0
got=$($RECORDS "$out" --kind tcp --count)
expect_eq "tcp records in all" "$got" 5
