#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of TLS read in plaintext (docs/design/tls.md): nginx (1 worker)
# serving HTTPS on loopback under wrk (keep-alive), nginx monitored.
#
# Modes, alternating within each round:
#   off     kmond with collectors.tcp.tls false: the connections read
#           `tls`
#   floor   as off, plus an empty program on each uprobe kmond attaches
#           (bench/floor_tls.bpf.c, in the nginx worker only): a uprobe
#           traps into the kernel, that is the floor
#   on      kmond with collectors.tcp.tls true
# Per mode, medians with [min .. max] over the rounds: wrk's requests/s,
# the nginx worker's CPU per request (its threads' schedstat: the uprobes
# and the tcp programs run in its context), kmond's CPU per request. The
# cost of a mode is its worker CPU per request over off's in the same
# round; the bound (issue 42) is on <= 1.5 x floor.
#   bench/tls-cost.sh [ROUNDS] [SECONDS] [CONNECTIONS]  (as root; 10 rounds)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-5}
CONNS=${3:-16}
PORT=18643
TLS=18644
make -s build/kmond build/bench/floor_load || fail "cannot build kmond"
bench_init
source tests/lib/nginx.sh
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=bench.test -batch 2>/dev/null ||
	fail "openssl req"
NGINX_LOCATIONS="listen 127.0.0.1:$TLS ssl;
		ssl_certificate $WORK/cert.pem;
		ssl_certificate_key $WORK/key.pem;"
start_nginx $PORT 1
WORKER=$(pgrep -P "$NGINX_PID" | head -1)
[ -n "$WORKER" ] || fail "no nginx worker"
LIB=$(awk '$6 ~ /\/libssl\.so\.3$/ { print $6; exit }' "/proc/$WORKER/maps")
[ -n "$LIB" ] || fail "the nginx worker maps no libssl.so.3"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ivmlinux/x86 \
	-c bench/floor_tls.bpf.c -o "$WORK/floor_tls.o" ||
	fail "cannot build bench/floor_tls.bpf.c"

config() {
	cat >"$WORK/kmond.$1.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { comm: nginx } }
collectors:
  tcp: { enabled: true, tls: $2, requests: none }
exporters:
  - { type: file, path: "$WORK/records.json" }
YAML
}
config off false
config floor false
config on true

# one run MODE: "req/s requests worker_ns kmond_ns"
run() {
	local mode=$1 floor= w0 k0 out
	kmond_launch build/kmond /dev/null "$WORK/err" "$WORK/kmond.$mode.yaml" -v ||
		fail "kmond: $(tail -3 "$WORK/err")"
	if [ "$mode" = floor ]; then
		FLOOR_PID=$WORKER FLOOR_LIB=/proc/$WORKER/root$LIB \
			build/bench/floor_load "$WORK/floor_tls.o" >"$WORK/floor.out" 2>&1 &
		floor=$!
		STARTED_PIDS+=($floor)
		until grep -q attached "$WORK/floor.out"; do
			kill -0 $floor || fail "floor_load: $(cat "$WORK/floor.out")"
			sleep 0.1
		done
	fi
	if [ "$mode" = on ]; then
		until grep -q "TLS of pid $WORKER read in plaintext" "$WORK/err"; do
			kill -0 "$KMOND_PID" || fail "kmond: $(tail -3 "$WORK/err")"
			sleep 0.1
		done
	fi
	w0=$(proc_cpu_ns "$WORKER")
	k0=$(proc_cpu_ns "$KMOND_PID")
	wrk -t1 -c"$CONNS" -d"${SECS}s" "https://127.0.0.1:$TLS/text" >"$WORK/wrk.out"
	out=$(awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out")
	echo "$out $(($(proc_cpu_ns "$WORKER") - w0)) $(($(proc_cpu_ns "$KMOND_PID") - k0))"
	[ -z "$floor" ] || { kill -TERM $floor; wait $floor || true; }
	kmond_stop
}

declare -A RPS WNS KNS ADD
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in off floor on; do
		read -r rps n wns kns < <(run $mode)
		RPS[$mode]+=" $rps"
		WNS[$mode,$r]=$(awk -v w="$wns" -v n="$n" 'BEGIN { printf "%.0f", w / n }')
		WNS[$mode]+=" ${WNS[$mode,$r]}"
		KNS[$mode]+=" $(awk -v k="$kns" -v n="$n" 'BEGIN { printf "%.0f", k / n }')"
	done
	for mode in floor on; do
		ADD[$mode]+=" $((WNS[$mode,$r] - WNS[off,$r]))"
	done
	echo "round $r: worker ns/request off ${WNS[off,$r]} floor ${WNS[floor,$r]} on ${WNS[on,$r]}" >&2
done
printf '%-6s %-28s %-28s %-28s %s\n' mode "requests/s" "worker ns/request" \
	"kmond ns/request" "added over off (ns/request)"
for mode in off floor on; do
	printf '%-6s %-28s %-28s %-28s %s\n' $mode "$(median_spread ${RPS[$mode]})" \
		"$(median_spread ${WNS[$mode]})" "$(median_spread ${KNS[$mode]})" \
		"$([ $mode = off ] && echo - || median_spread ${ADD[$mode]})"
done
