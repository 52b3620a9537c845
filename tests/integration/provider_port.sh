#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The `port` selector names the process listening on that port, also one
# that starts listening after kmond: its requests carry the service; a
# server on another port and the client are not selected.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

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
	start_svc $p $SVC server --port $p
	eval "pid_$p=$SVC_PID"
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
