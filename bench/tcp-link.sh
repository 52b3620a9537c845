#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of request paths (ids, parent links, linked/unlinked counts) in
# the tcp collector's BPF programs: nginx as a reverse proxy on loopback
# (one worker serves the front requests, calls a backend server block
# over keep-alive connections, and serves those calls too: per wrk
# request two server requests and one call), under wrk, with kmond
# built without linking (BASE, the kmond binary of the commit before)
# and with it (build/kmond), alternating, each round: the BPF time of
# every tcp program per wrk request (kernel.bpf_stats_enabled); then the
# same with neither monitored (idle: the floor every process pays).
# Prints each round, the medians and minima (noise only adds: on a
# shared machine the minima are the steadier figure); the difference is
# what linking costs per request.
#   bench/tcp-link.sh BASE_KMOND [ROUNDS] [SECONDS]  (as root, after make)
#   e.g. BASE_KMOND: git archive HEAD~N | tar -x -C /tmp/base; make -C /tmp/base
cd "$(dirname "$0")/.."
source bench/lib.sh
BASE=${1:?usage: bench/tcp-link.sh BASE_KMOND [ROUNDS] [SECONDS]}
ROUNDS=${2:-10}
SECS=${3:-3}
IDLE_ROUNDS=${IDLE_ROUNDS:-3} # the idle pair in the first rounds only
FRONT=18641 BACK=18642
bench_init
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
prefix=$WORK/nginx
mkdir -p "$prefix/logs"
cat >"$prefix/nginx.conf" <<NGINX
user root;
worker_processes 1;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $prefix/tmp_body;
	proxy_temp_path $prefix/tmp_proxy;
	fastcgi_temp_path $prefix/tmp_fastcgi;
	uwsgi_temp_path $prefix/tmp_uwsgi;
	scgi_temp_path $prefix/tmp_scgi;
	keepalive_requests 1000000;
	upstream back { server 127.0.0.1:$BACK; keepalive 64; }
	server {
		listen 127.0.0.1:$FRONT;
		location / {
			proxy_pass http://back;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
	server {
		listen 127.0.0.1:$BACK;
		keepalive_requests 1000000;
		location / { return 200 "hello\n"; }
	}
}
NGINX
"$NGINX" -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" &
STARTED_PIDS+=($!)
for ((i = 0; i < 50; i++)); do
	curl -sf -o /dev/null "http://127.0.0.1:$FRONT/" && break
	sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$FRONT/" || fail "nginx proxy did not start"

run() { # BIN COMM: prints BPF ns per wrk request over every tcp program
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: $2 } }
collectors:
  tcp: { requests: all }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
	: >"$WORK/out.json"
	kmond_launch "$1" "$WORK/stdout" "$WORK/err" "$WORK/kmond.yaml" ||
		fail "kmond: $(tail -3 "$WORK/err")"
	sysctl -q kernel.bpf_stats_enabled=1
	wrk -t1 -c32 -d"${SECS}s" "http://127.0.0.1:$FRONT/" >"$WORK/wrk.out"
	read -r ns _ < <(bpf_cost tcp_)
	sysctl -q kernel.bpf_stats_enabled=0
	kmond_stop
	n=$(awk '/requests in/ { print $1 }' "$WORK/wrk.out")
	# requests followed (either end): nginx's own, from their records
	followed=$(grep -c '"kind":"tcp"' "$WORK/out.json" || true)
	awk -v ns="$ns" -v n="$n" 'BEGIN { printf "%.0f", ns / n }'
	[ "$followed" -gt 0 ] && echo " $followed $n" >>"$WORK/followed"
	return 0
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A got
wrk -t1 -c32 -d1s "http://127.0.0.1:$FRONT/" >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	modes="base link"
	[ "$r" -le "$IDLE_ROUNDS" ] && modes="base link base_idle link_idle"
	for mode in $modes; do
		case $mode in
		base) v=$(run "$BASE" nginx) ;;
		link) v=$(run build/kmond nginx) ;;
		base_idle) v=$(run "$BASE" kmt_nobody) ;;
		link_idle) v=$(run build/kmond kmt_nobody) ;;
		esac
		got[$mode]+="$v "
		echo "round $r $mode: $v ns per request"
	done
	echo "round $r linking: $(($(echo "${got[link]}" | awk '{ print $NF }') - $(echo "${got[base]}" | awk '{ print $NF }'))) ns per request"
done
for mode in base link base_idle link_idle; do
	echo "median $mode: $(echo "${got[$mode]}" | tr ' ' '\n' | grep . | median)," \
		"min $(echo "${got[$mode]}" | tr ' ' '\n' | grep . | sort -n | head -1)" \
		"ns per wrk request (every tcp program)"
done
diffs=$(paste <(echo "${got[link]}" | tr ' ' '\n' | grep .) <(echo "${got[base]}" | tr ' ' '\n' | grep .) | awk '{ print $1 - $2 }')
echo "median of the rounds' differences (linking): $(echo "$diffs" | median) ns per wrk request"
# nginx follows each wrk request as a server request, a call and the
# backend's server request: the records say how many per wrk request
per=$(awk '{ f += $1; n += $2 } END { printf "%.2f", f / n }' "$WORK/followed")
echo "requests followed per wrk request (tcp records): $per;" \
	"linking per request followed: $(awk -v d="$(echo "$diffs" | median)" -v p="$per" 'BEGIN { printf "%.0f", d / p }') ns"
