#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Two real kmond instances, node-1 and node-2, feed kmon-topo through the
# broker. Three hosts are network namespaces made here, on one bridge: a
# client (10.250.0.3) calls frontend (10.250.0.1), which calls api
# (10.250.0.2) once per request. Both kmonds run in the root namespace,
# but each selects only its own host's service (by pid), as if it ran
# there alone: node-1 serves client -> frontend, node-2 serves
# 10.250.0.1 -> api (it knows its caller only by address), node-1 also
# has frontend's calls from the client side, frontend -> 10.250.0.2. The
# records give each service's address, so kmon-topo reads 10.250.0.1 as
# frontend and 10.250.0.2 as api: one graph, client -> frontend -> api,
# every request counted once (the server side wins).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/netns.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/kafka.sh"

N=40
tag=$$
NS_SW=kmt-sw-$tag NS_C=kmt-c-$tag NS_1=kmt-1-$tag NS_2=kmt-2-$tag
netns_bridge $NS_SW
netns_host $NS_1 10.250.0.1
netns_host $NS_2 10.250.0.2
netns_host $NS_C 10.250.0.3

# server NAME NETNS ADDR [DOWNSTREAM]: sets pid_NAME.
server() {
	start_svc "$1" ip netns exec "$2" $SVC server --bind "$3" --port 8080 \
		${4:+--downstream "$4"}
	eval "pid_$1=$SVC_PID"
}
server api $NS_2 10.250.0.2
server frontend $NS_1 10.250.0.1 10.250.0.2:8080

start_broker -p 0
# node NAME SERVICE PID: a kmond that monitors only SERVICE.
declare -A node_pid
node() {
	cat >"$WORK/$1.yaml" <<YAML
node: $1
interval: 500ms
services:
  - { name: $2, match: { pid: $3 } }
collectors:
  tcp: { enabled: true, requests: none, nodes: [10.250.0.0/24] }
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "$BROKERS", topic_prefix: "kmon." }
YAML
	"$KMOND" -c "$WORK/$1.yaml" >"$WORK/$1.json" 2>"$WORK/$1.err" &
	STARTED_PIDS+=($!)
	node_pid[$1]=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "running on" "$WORK/$1.err" && return
		sleep 0.1
	done
	fail "kmond $1 did not start: $(tail -3 "$WORK/$1.err")"
}
node node-1 frontend $pid_frontend
node node-2 api $pid_api

"$BUILD/kmon-topo" -b "$BROKERS" -g topo-nodes-$tag --interval 0.5 \
	-X session.timeout.ms=6000 -X heartbeat.interval.ms=1000 \
	--json "$WORK/topo.json" --dot "$WORK/graph.dot" 2>"$WORK/topo.err" &
topo=$!
STARTED_PIDS+=($topo)

got=$(ip netns exec $NS_C $SVC client --host 10.250.0.1 --port 8080 --ms 1 --repeat $N)
expect_eq "client requests answered" "$got" $N
sleep 1.2 # two intervals: the last request is out
for n in node-1 node-2; do
	kill -TERM ${node_pid[$n]}
	wait ${node_pid[$n]}
	expect_eq "$n exit code" $? 0
done

# What each node reported on its own.
side_edges() { # NODE SIDE
	local f=$WORK/$1.json
	echo "$($RECORDS "$f" --kind topology --where side=$2 --values src | sort -u) -> $($RECORDS "$f" --kind topology --where side=$2 --values dst | sort -u)"
}
expect_eq "node-1 server-side edges" "$(side_edges node-1 server)" "10.250.0.3 -> frontend"
expect_eq "node-2 server-side edges" "$(side_edges node-2 server)" "10.250.0.1 -> api"
# frontend's calls to api, which node-1 does not monitor: its client side.
expect_eq "node-1 client-side edges" "$(side_edges node-1 client)" "frontend -> 10.250.0.2"
expect_eq "node-2 client-side edges" "$(side_edges node-2 client)" " -> "
for n in node-1 node-2; do
	expect_eq "$n server-side requests" "$($RECORDS "$WORK/$n.json" --kind topology --where side=server --sum requests)" $N
done
expect_eq "node-1 client-side requests" "$($RECORDS "$WORK/node-1.json" --kind topology --where side=client --sum requests)" $N

edges_of() {
	python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
for e in json.loads(lines[-1])["edges"] if lines else []:
    print(f'{e["src"]} -> {e["dst"]} {e["side"]} requests={e["requests"]} '
          f'server_nodes={",".join(e["server_nodes"])}')
PY
}
want="10.250.0.3 -> frontend server requests=$N server_nodes=node-1
frontend -> api server requests=$N server_nodes=node-2"
for ((i = 0; i < 100; i++)); do
	[ "$(edges_of "$WORK/topo.json" 2>/dev/null)" = "$want" ] && break
	sleep 0.1
done
kill -TERM $topo
wait $topo
expect_eq "kmon-topo exit code" $? 0
got=$(edges_of "$WORK/topo.json")
[ "$got" = "$want" ] || fail "merged graph:
$got
want:
$want
kmon-topo: $(tail -3 "$WORK/topo.err")"
echo "ok: kmon-topo merged the two nodes:"
echo "$got" | sed 's/^/    /'
grep -q '"frontend" -> "api"' "$WORK/graph.dot" || fail "no frontend -> api in graph.dot"
echo "ok: graph.dot has frontend -> api"
