#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A server in its own network namespace (a container), selected by its
# port, with a connection opened before kmond started: kmond finds the
# listener in that namespace's listen list, so the server is monitored and
# its older connection is known as server side; every request counts.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/netns.sh"

NS=kmt_tcpns_$$
netns_alone "$NS"
PORT=$(test_port)

start_svc ns ip netns exec "$NS" $SVC server --port $PORT
server=$SVC_PID
# Connected now, asks only once kmond runs.
ip netns exec "$NS" $SVC client --port $PORT --ms 1 --repeat 20 --wait "$WORK/go" >"$WORK/old.n" &
old=$!
STARTED_PIDS+=($old)
for _ in $(seq 50); do [ -e "$WORK/go.ready" ] && break; sleep 0.1; done
[ -e "$WORK/go.ready" ] || fail "the early client did not connect"

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: contained
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
touch "$WORK/go"
wait $old || fail "the early client failed"
n_new=$(ip netns exec "$NS" $SVC client --port $PORT --ms 1 --repeat 5)
sleep 0.8
stop_kmond

out=$WORK/out.json
expect_eq "requests on the connection older than kmond" \
	"$($RECORDS "$out" --kind tcp --where service=contained --where req_bytes=101 --count)" \
	$(($(cat "$WORK/old.n") + n_new))
expect_eq "service of every record" \
	"$($RECORDS "$out" --kind tcp --values service | sort -u)" contained
