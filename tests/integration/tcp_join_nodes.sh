#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One exchange seen from both ends by two kmonds: a caller on host A
# (10.251.0.1, a network namespace) calls a server on host B (10.251.0.2);
# node-a monitors only the caller, node-b only the server (both run in
# the root namespace, each selecting its host's process by pid, as if it
# ran there alone). Every client-side record of node-a joins exactly one
# server-side record of node-b by (client port, req_seq, resp_seq), none
# is left unmatched on either side, and the caller waited at least as long
# as the server worked. kmon-topo, reading both through the broker, has
# one edge caller -> api from the server's side (node-a's client-side
# edge names B by address, node-b's server-side one names A by address;
# each node's records give the address of its own service).
# Then the same through destination NAT: the caller calls a virtual
# address, 10.251.0.100:80, that an nftables rule in host A sends to
# B:8080; the records of the two ends name different server addresses and
# ports, and still join. Through the broker (kmon.tcp in 8 partitions)
# every client message and its server's share one partition, NAT or not:
# kmond keys tcp records by the exchange's req_seq (docs/kafka.md).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/netns.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/caller.sh"
source "$(dirname "$0")/../lib/kafka.sh"

command -v nft >/dev/null || PATH=$PATH:/usr/sbin
command -v nft >/dev/null || fail "nft is not installed (scripts/install-deps.sh test)"
JOIN="python3 $(dirname "$0")/../lib/tcp_join.py"
tag=$$
NS_SW=kmt-sw-$tag NS_A=kmt-a-$tag NS_B=kmt-b-$tag
netns_bridge $NS_SW
netns_host $NS_A 10.251.0.1
netns_host $NS_B 10.251.0.2

start_svc api ip netns exec $NS_B $SVC server --bind 10.251.0.2 --port 8080
api=$SVC_PID
start_caller ip netns exec $NS_A

start_broker -p 0
broker_cmd "topic kmon.tcp 8"
# node NAME SERVICE PID: a kmond that monitors only SERVICE.
declare -A node_pid
node() {
	cat >"$WORK/$1.yaml" <<YAML
node: $1
interval: 500ms
services:
  - { name: $2, match: { pid: $3 } }
collectors:
  tcp: { enabled: true, nodes: [10.251.0.0/24] }
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
node node-a caller $CALLER_PID
node node-b api $api
sleep 0.6 # one interval: the pids are selected

"$BUILD/kmon-topo" -b "$BROKERS" -g join-nodes-$tag --interval 0.5 \
	-X session.timeout.ms=6000 -X heartbeat.interval.ms=1000 \
	--json "$WORK/topo.json" 2>"$WORK/topo.err" &
topo=$!
STARTED_PIDS+=($topo)

in_caller persistent $SVC client --host 10.251.0.2 --port 8080 --repeat 4
in_caller short $SVC client --host 10.251.0.2 --port 8080 --mode short --repeat 1
n=$(($(cat "$WORK/persistent.out") + $(cat "$WORK/short.out")))

edges_of() {
	python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
for e in json.loads(lines[-1])["edges"] if lines else []:
    print(f'{e["src"]} -> {e["dst"]} {e["side"]} requests={e["requests"]} '
          f'server_nodes={",".join(e["server_nodes"])} '
          f'client_nodes={",".join(e["client_nodes"])}')
PY
}
want="caller -> api server requests=$n server_nodes=node-b client_nodes=node-a"
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
echo "ok: kmon-topo: $got"

# Destination NAT in host A: 10.251.0.100:80 is B's 8080.
ip netns exec $NS_A nft -f - <<NFT || fail "cannot add the DNAT rule"
table ip kmt_nat {
	chain output {
		type nat hook output priority -100;
		ip daddr 10.251.0.100 tcp dport 80 dnat to 10.251.0.2:8080
	}
}
NFT
in_caller nat $SVC client --host 10.251.0.100 --port 80 --repeat 3
in_caller nat_short $SVC client --host 10.251.0.100 --port 80 --mode short --repeat 1
n_nat=$(($(cat "$WORK/nat.out") + $(cat "$WORK/nat_short.out")))

sleep 1.2 # two intervals: the last request is out
for nd in node-a node-b; do
	kill -TERM ${node_pid[$nd]}
	wait ${node_pid[$nd]}
	expect_eq "$nd exit code" $? 0
done

a=$WORK/node-a.json b=$WORK/node-b.json
expect_eq "node-a: client records" "$($RECORDS "$a" --kind tcp --where side=client --count)" $((n + n_nat))
expect_eq "node-a: server records" "$($RECORDS "$a" --kind tcp --where side=server --count)" 0
expect_eq "node-a: client records through the NAT" \
	"$($RECORDS "$a" --kind tcp --where raddr=10.251.0.100 --where rport=80 --count)" $n_nat
expect_eq "node-b: server records" "$($RECORDS "$b" --kind tcp --where side=server --count)" $((n + n_nat))
expect_eq "node-b: client records" "$($RECORDS "$b" --kind tcp --where side=client --count)" 0
pairs=$($JOIN join "$a" "$b") || fail "the two nodes' records do not join"
expect_eq "exchanges joined across the nodes" "$pairs" $((n + n_nat))
expect_eq "node-a: client-side topology requests" \
	"$($RECORDS "$a" --kind topology --where side=client --sum requests)" $((n + n_nat))
expect_eq "node-a: dst of its edges" \
	"$($RECORDS "$a" --kind topology --values dst | sort -u | tr '\n' ' ')" "10.251.0.100 10.251.0.2 "
expect_eq "node-a: its address in its edges" \
	"$($RECORDS "$a" --kind topology --values src_addr | sort -u)" 10.251.0.1

consume kmon.tcp "$WORK/tcp.kcat"
$KAFKA_MSGS check "$WORK/tcp.kcat" --kind tcp >/dev/null || fail "keys or headers of kmon.tcp"
read -r kpairs kvia kparts < <($KAFKA_MSGS pairs "$WORK/tcp.kcat" --via 10.251.0.100) ||
	fail "the two ends of an exchange are not in one partition"
expect_eq "exchanges in one partition" "$kpairs" $((n + n_nat))
expect_eq "of which through the NAT" "$kvia" $n_nat
[ "$kparts" -ge 2 ] || fail "all exchanges in $kparts partition: the key does not spread them"
echo "ok: $kpairs exchanges, each in one partition ($kparts partitions used)"
