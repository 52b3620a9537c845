#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The trace accuracy harness's application (tests/lib/trace_app.py) on
# two hosts: host A (10.252.0.1, a network namespace) runs the load
# generator, the front, the middle tier (a thread per connection) and
# its Redis and PostgreSQL; host B (10.252.0.2) the back service. Two
# kmonds (node-a monitors A's load, front and middle, node-b B's back)
# publish to the mock Kafka broker; kmon-trace, reading both, writes
# exactly one trace per front request, each of the shape the
# application's ground truth gives: the load's call at the root, the
# front's request under it (joined on one host), the front's call, the
# middle's request, the middle's calls (kmond's parent links), and under
# each call to the back service the back's request from the other node
# (joined across nodes by sequence numbers). Every line is valid OTLP.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/netns.sh"
source "$(dirname "$0")/../lib/caller.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/otlp.sh"
source "$(dirname "$0")/../lib/trace_stack.sh"

N=${TRACE_REQUESTS:-60}
otlp_setup
tag=$$
NS_SW=kta-sw-$tag NS_A=kta-a-$tag NS_B=kta-b-$tag
netns_bridge $NS_SW
netns_host $NS_A 10.252.0.1
netns_host $NS_B 10.252.0.2
A="ip netns exec $NS_A" B="ip netns exec $NS_B"

wait_in() { # NETNS_PREFIX... PORT HOST: until HOST:PORT accepts
	local i host=${*: -1} port=${*: -2:1}
	for ((i = 0; i < 150; i++)); do
		"${@:1:$#-2}" /usr/bin/python3 -c \
			"import socket; socket.create_connection(('$host', $port), 0.2)" \
			2>/dev/null && return 0
		sleep 0.1
	done
	fail "nothing listens on $host:$port"
}

p=$(test_port 5)
REDIS=$p PG=$((p + 1)) BACK=$((p + 2)) MID=$((p + 3)) FRONT=$((p + 4))
mkdir -p "$WORK/truth" "$WORK/pg"
chmod 755 "$WORK" && chown postgres "$WORK/pg"
trace_bg redis $A redis-server --port $REDIS --bind 127.0.0.1 --save '' \
	--appendonly no --daemonize no --dir "$WORK"
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
su postgres -s /bin/sh -c "$pgbin/initdb -D $WORK/pg/data -A trust -U postgres" \
	>"$WORK/initdb.log" 2>&1 || fail "initdb: $(tail -3 "$WORK/initdb.log")"
trace_bg postgres $A su postgres -s /bin/sh -c "exec $pgbin/postgres -D $WORK/pg/data \
-p $PG -k $WORK/pg -c listen_addresses=127.0.0.1"
trace_bg back $B $TRACE_APP back --bind 10.252.0.2 --port $BACK \
	--log "$WORK/truth/back.json"
trace_bg middle-thread $A $TRACE_APP middle --mode thread --svc middle-thread \
	--port $MID --log "$WORK/truth/middle-thread.json" --redis $REDIS --pg $PG \
	--back $BACK --back-host 10.252.0.2
trace_bg front $A $TRACE_APP front --port $FRONT --log "$WORK/truth/front.json" \
	--target middle-thread=$MID
wait_in $A $REDIS 127.0.0.1
wait_in $A $PG 127.0.0.1
wait_in $B $BACK 10.252.0.2
wait_in $A $MID 127.0.0.1
wait_in $A $FRONT 127.0.0.1
start_caller $A

start_broker -p 0
declare -A node_pid
start_node() { # NAME SERVICE=PID...: a kmond that monitors those processes
	local name=$1 svc i
	shift
	{
		echo "node: $name"
		echo "interval: 250ms"
		echo "services:"
		for svc in "$@"; do echo "  - { name: ${svc%=*}, match: { pid: ${svc#*=} } }"; done
		echo "collectors:"
		echo "  tcp: { enabled: true, nodes: [10.252.0.0/24] }"
		echo "exporters:"
		echo "  - { type: file, path: \"-\" }"
		echo "  - { type: kafka, brokers: \"$BROKERS\", topic_prefix: \"kmon.\" }"
	} >"$WORK/$name.yaml"
	"$KMOND" -c "$WORK/$name.yaml" >"$WORK/$name.json" 2>"$WORK/$name.err" &
	STARTED_PIDS+=($!)
	node_pid[$name]=$!
	for ((i = 0; i < 300; i++)); do
		grep -q "running on" "$WORK/$name.err" && return
		sleep 0.1
	done
	fail "kmond $name did not start: $(tail -3 "$WORK/$name.err")"
}
start_node node-a load=$CALLER_PID front=${TRACE_PID[front]} \
	middle-thread=${TRACE_PID[middle-thread]}
start_node node-b back=${TRACE_PID[back]}
sleep 0.6 # two intervals: the pids are selected

# --quiet 3: longer than the spread of one trace's records over the two
# nodes (a request's record is written when the next one begins).
"$KMON_TRACE" -b "$BROKERS" -g trace-nodes-$tag --quiet 3 \
	-X session.timeout.ms=6000 -X heartbeat.interval.ms=1000 \
	-o "$WORK/traces.otlp" 2>"$WORK/kt.err" &
kt=$!
STARTED_PIDS+=($kt)

$A curl -sf --max-time 30 -o /dev/null "http://127.0.0.1:$MID/warm" || fail "no /warm"
in_caller load $TRACE_APP load --port $FRONT --log "$WORK/truth/load.json" \
	--run nodes-c8 --variant thread --to middle-thread --conc 8 --requests $N \
	--seed $RANDOM
for name in front middle-thread back; do kill -TERM "${TRACE_PID[$name]}"; done
for name in front middle-thread back; do wait "${TRACE_PID[$name]}"; done
sleep 0.6 # the last requests, written at the close, are out
for name in node-a node-b; do
	kill -TERM ${node_pid[$name]}
	wait ${node_pid[$name]}
	expect_eq "$name exit code" $? 0
done
shape() {
	$TRACE_SCORE shape "$WORK/truth" "$WORK/traces.otlp" \
		--monitored load,front,middle-thread,back
}
for ((i = 0; i < 100; i++)); do # the traces are written after --quiet
	shape >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 3.5 # nothing more may come: no trace in pieces
kill -TERM $kt
wait $kt
expect_eq "kmon-trace exit code" $? 0
shape || fail "kmon-trace's traces: $(tail -1 "$WORK/kt.err")"
otlp_check "$WORK/traces.otlp"
# kmond's own links on node-a, for the record
$TRACE_SCORE score "$WORK/truth" "$WORK/node-a.json" --target front=0.99,0.99 \
	--target middle-thread=0.99,0.99 || fail "parent links below target"
