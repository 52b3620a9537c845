#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A chain of three services on loopback, A -> B -> C (each request to A
# makes one to B, which makes one to C): the topology holds exactly the
# edges client -> A, A -> B and B -> C, each with one request per client
# request, and the server-side tcp records of each service count the
# same; A and B have as many client-side ones, naming whom they called.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

BASE=$(test_port 3)
PA=$BASE PB=$((BASE + 1)) PC=$((BASE + 2))
N=12

start_server() { # NAME PORT [DOWNSTREAM]
	start_svc "$1" $SVC server --port "$2" ${3:+--downstream "$3"}
	eval "pid_$1=$SVC_PID"
}
start_server c $PC
start_server b $PB $PC
start_server a $PA $PB

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: svc-a, match: { port: $PA } }
  - { name: svc-b, match: { port: $PB } }
  - { name: svc-c, match: { port: $PC } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"

got=$($SVC client --port $PA --ms 5 --repeat $N)
expect_eq "client requests answered" "$got" $N
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
edges=$($RECORDS "$out" --kind topology --values src | paste -d' ' - <($RECORDS "$out" --kind topology --values dst) | sort -u | tr '\n' ';')
expect_eq "edges" "$edges" "127.0.0.1 svc-a;svc-a svc-b;svc-b svc-c;"
for e in "127.0.0.1 svc-a" "svc-a svc-b" "svc-b svc-c"; do
	set -- $e
	got=$($RECORDS "$out" --kind topology --where src=$1 --where dst=$2 --sum requests)
	expect_eq "requests on $1 -> $2" "$got" $N
	side=$($RECORDS "$out" --kind topology --where src=$1 --where dst=$2 --values side | sort -u)
	expect_eq "side of $1 -> $2" "$side" server
done
for s in a b c; do
	pid=$(eval echo "\$pid_$s")
	got=$($RECORDS "$out" --kind tcp --where pid=$pid --where side=server --count)
	expect_eq "server-side tcp records of svc-$s" "$got" $N
done
# A and B call their downstream: client-side records naming it; the edges
# above are each counted once all the same.
for e in "a svc-b" "b svc-c" "c null"; do
	set -- $e
	pid=$(eval echo "\$pid_$1")
	got=$($RECORDS "$out" --kind tcp --where pid=$pid --where side=client --values dst | sort | uniq -c | awk '{ print $2, $1 }')
	[ "$2" = null ] && want= || want="$2 $N"
	expect_eq "client-side tcp records of svc-$1" "$got" "$want"
done
# B answers A after C answered B (1 ms) and sleeping 1 ms itself.
p50=$($RECORDS "$out" --kind topology --where src=svc-a --where dst=svc-b --values latency_p50_ns | sort -n | head -1)
[ "$p50" -ge 2000000 ] || fail "A -> B p50 $p50 ns is below B's 2 ms of work"
echo "ok: A -> B p50 $p50 ns"
