#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of protocol identification per new connection: nginx on loopback
# under wrk with "Connection: close" (connect, one request, close, in a
# loop), kmond watching nginx with requests: none, alternating in each
# round: no kmond, tcp with protocols: false, tcp with protocols: true.
# Reports per connection kmond's CPU (utime + stime) and its BPF
# programs' time (bpf_stats, one more run per mode), and the difference
# identification makes. This machine is shared: figures vary.
# With MODE keepalive, wrk keeps its connections: the cost per request
# of connections long decided (a socket-storage lookup per segment and
# per send), "connection" then reads "request".
#   bench/protocol-conn.sh [ROUNDS] [SECONDS] [CONNECTIONS] [close|keepalive]
#   (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-3}
SECS=${2:-5}
CONNS=${3:-8}
MODE=${4:-close}
header=(-H "Connection: close")
[ "$MODE" = keepalive ] && header=()
PORT=18641
bench_init
source tests/lib/nginx.sh
start_nginx $PORT 1
tck=$(getconf CLK_TCK)

load() { # "requests/s requests" (each request on a connection of its own)
	wrk -t1 -c"$CONNS" -d"${SECS}s" "${header[@]}" \
		"http://127.0.0.1:$PORT/text" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

config() { # true | false: protocols identified or not
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: nginx } }
collectors:
  tcp: { requests: none, protocols: $1 }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
}

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
declare -A rps cpu conns
for m in off false true; do rps[$m]=0 cpu[$m]=0 conns[$m]=0; done
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	for m in off false true; do
		if [ $m != off ]; then
			config $m
			kmond_start "$WORK/kmond.yaml"
			c0=$(kmond_ticks)
		fi
		read -r x n < <(load)
		if [ $m != off ]; then
			sleep 1.1 # the last interval's drain counts too
			c1=$(kmond_ticks)
			kmond_stop
			cpu[$m]=$((cpu[$m] + c1 - c0))
		fi
		echo "round $r protocols=$m: $x conn/s ($n connections)"
		rps[$m]=$(calc "${rps[$m]} + $x" 2)
		conns[$m]=$((conns[$m] + n))
	done
done
# bpf_stats costs two clock reads per run: on only in one more run each
declare -A bpf_ns bpf_n
for m in false true; do
	config $m
	kmond_start "$WORK/kmond.yaml"
	sysctl -q kernel.bpf_stats_enabled=1
	read -r x n < <(load)
	read -r ns runs < <(own_cost "")
	read -r cap_ns cap_runs < <(own_cost proto_)
	sysctl -q kernel.bpf_stats_enabled=0
	bpf_ns[$m]=$(calc "$ns / $n" 0) bpf_n[$m]=$(calc "$runs / $n" 1)
	[ $m = true ] && cap="$(calc "$cap_ns / $n" 0) ns in $(calc "$cap_runs / $n" 1) runs"
	sleep 1.1
	kmond_stop
done
ident=$(grep -c '"kind":"endpoint"' "$WORK/out.json" || true)
echo "mode $MODE, connections: $CONNS at a time, $ROUNDS rounds of ${SECS}s, nginx 1 worker"
for m in false true; do
	echo "protocols: $m  throughput ratio $(calc "${rps[$m]} / ${rps[off]}" 4)," \
		"kmond CPU $(calc "${cpu[$m]} * 1000000 / $tck / ${conns[$m]}") us/connection," \
		"BPF ${bpf_ns[$m]} ns/connection (${bpf_n[$m]} runs)"
done
echo "capture programs alone: $cap per connection"
echo "identification per connection: kmond CPU +$(calc "(${cpu[true]} / ${conns[true]} - ${cpu[false]} / ${conns[false]}) * 1000000 / $tck") us," \
	"BPF +$(calc "${bpf_ns[true]} - ${bpf_ns[false]}" 0) ns"
echo "endpoint records in the last run: $ident"
