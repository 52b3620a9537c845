#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of protocol identification per new connection: nginx on loopback
# under wrk with "Connection: close" (connect, one request, close, in a
# loop), kmond watching nginx with requests: none (so kmond's user space
# does little but the samples and their verdicts). Reports, per
# connection: the capture programs' time (proto_ingress, proto_egress on
# every segment of every socket, bpf_stats), the tcp collector's other
# programs, and kmond's CPU (utime + stime). Alternates runs without
# kmond for the throughput ratio. This machine is shared: figures vary.
#   bench/protocol-conn.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-3}
SECS=${2:-5}
CONNS=${3:-8}
PORT=18641
bench_init
source tests/lib/nginx.sh
start_nginx $PORT 1
tck=$(getconf CLK_TCK)

load() { # "requests/s requests" (each request on a connection of its own)
	wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Connection: close" \
		"http://127.0.0.1:$PORT/text" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: nginx } }
collectors:
  tcp: { requests: none }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML

# bpf_cost, but only of this kmond's programs (other kmonds may run
# here): the ids its descriptors hold
own_cost() {
	local ids
	ids=$(cat /proc/$KMOND_PID/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u | tr '\n' ,)
	bpftool prog show -j | python3 -c '
import json, sys
ids = {int(x) for x in sys.argv[1].split(",") if x}
ns = n = 0
for p in json.load(sys.stdin):
    if p.get("name", "").startswith(sys.argv[2]) and p["id"] in ids:
        ns += p.get("run_time_ns", 0)
        n += p.get("run_cnt", 0)
print(ns, n)' "$ids" "$1"
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
off_rps=0 on_rps=0 cpu=0 conns=0
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	read -r rps n < <(load)
	echo "round $r off: $rps conn/s"
	off_rps=$(calc "$off_rps + $rps" 2)
	kmond_start "$WORK/kmond.yaml"
	c0=$(kmond_ticks)
	read -r rps n < <(load)
	sleep 1.1 # the last interval's drain counts too
	c1=$(kmond_ticks)
	kmond_stop
	echo "round $r on:  $rps conn/s ($n connections)"
	on_rps=$(calc "$on_rps + $rps" 2)
	cpu=$((cpu + c1 - c0))
	conns=$((conns + n))
done
# bpf_stats costs two clock reads per run: on only in one more run
kmond_start "$WORK/kmond.yaml"
sysctl -q kernel.bpf_stats_enabled=1
read -r rps n < <(load)
read -r cap_ns cap_cnt < <(own_cost proto_)
read -r tcp_ns tcp_cnt < <(own_cost tcp_)
sysctl -q kernel.bpf_stats_enabled=0
sleep 1.1
kmond_stop
ident=$(grep -c '"kind":"endpoint"' "$WORK/out.json" || true)
echo "connections: $CONNS at a time, $ROUNDS rounds of ${SECS}s, nginx 1 worker"
echo "throughput ratio (kmond on / off): $(calc "$on_rps / $off_rps" 4)"
echo "capture programs: $(calc "$cap_ns / $n" 0) ns per connection" \
	"($(calc "$cap_cnt / $n" 1) runs, $(calc "$cap_ns / ($cap_cnt + 0.000001)" 0) ns each)"
echo "other tcp programs: $(calc "$tcp_ns / $n" 0) ns per connection" \
	"($(calc "$tcp_cnt / $n" 1) runs)"
echo "kmond user space + its syscalls: $(calc "$cpu * 1000000 / $tck / $conns") us per connection" \
	"(clock ticks: $cpu over $conns connections)"
echo "endpoint records: $ident"
