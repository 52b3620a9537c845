#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: accepted_unmonitored counts every listener on the host
# A server kmond does not monitor costs it nothing per connection: the
# state the kernel gives an accepted socket before its owner is known is
# given to the first of that listener's sockets only (stats:
# collectors.tcp.accepted_unmonitored), not to each of its 200. A monitored
# server beside it loses no request, and neither does the other one once
# a reload selects it.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

WATCHED=$(test_port)
OTHER=$((WATCHED + 1))
config() { # the services' YAML
	cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - { name: watched, match: { port: $WATCHED } }
$1
collectors:
  tcp: { enabled: true }
YAML
}
start_svc watched $SVC server --port $WATCHED
start_svc other $SVC server --port $OTHER
config ""
start_kmond "$WORK/kmond.yaml"

# stats are cumulative: the ones on either side of the 200 connections
sleep 0.5
t0=$(date +%s%N)
sleep 0.3
n_other=$($SVC client --port $OTHER --mode short --ms 1 --repeat 200)
sleep 0.3
t1=$(date +%s%N)
n_watched=$($SVC client --port $WATCHED --mode short --ms 1 --repeat 20)
config "  - { name: late, match: { port: $OTHER } }"
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "no reload"
n_late=$($SVC client --port $OTHER --mode short --ms 1 --repeat 10)
sleep 0.6
stop_kmond

out=$WORK/out.json
expect_eq "connections to the other server" "$n_other" 200
expect_eq "requests of the monitored server" \
	"$($RECORDS "$out" --kind tcp --where service=watched --where req_bytes=101 --count)" "$n_watched"
expect_eq "requests of the other server once selected" \
	"$($RECORDS "$out" --kind tcp --where service=late --where req_bytes=101 --count)" "$n_late"
expect_eq "protocol of the test's own (unknown) protocol" \
	"$($RECORDS "$out" --kind tcp --values protocol | sort -u)" unknown
unmonitored=$(python3 - "$out" $t0 $t1 <<'PY'
import json, sys
t0, t1, n = int(sys.argv[2]), int(sys.argv[3]), {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "stats":
        v = r["collectors"]["tcp"]["accepted_unmonitored"]
        if r["ts"] < t0:
            n["before"] = v
        elif r["ts"] > t1 and "after" not in n:
            n["after"] = v
print(n["after"] - n["before"])
PY
)
echo "accepted sockets given state, then read by no monitored process: $unmonitored"
# 1 of the test's 200 (a shared machine's other servers may add theirs)
[ "$unmonitored" -ge 1 ] && [ "$unmonitored" -lt 100 ] ||
	fail "$unmonitored accepted sockets of unmonitored processes were given state over 200 connections"
