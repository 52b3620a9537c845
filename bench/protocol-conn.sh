#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of protocol identification per new connection: nginx on loopback
# under wrk with "Connection: close" (connect, one request, close, in a
# loop), kmond watching this nginx (its pid: not the nginx of others)
# with requests: none. Each round alternates: no kmond, tcp with
# protocols: false, tcp with protocols: true, and floor: no kmond but
# empty programs on the same hooks (bench/floor.bpf.c), measured
# alike. Per connection and round: kmond's CPU (every thread's run time,
# /proc/PID/task/*/schedstat, from start-up done to exit begun) and its
# BPF programs' run time (bpf_stats, on through every round: the
# throughput ratios include its two clock reads per run). Prints the
# medians over the rounds, per program too, what identification adds
# (protocols: true minus false, paired by round) against the target,
# and the same above the floor (bpf_stats' own share of a program's
# time). This machine is shared: figures vary, and other traffic on the
# host runs kmond's programs too.
# With MODE keepalive, wrk keeps its connections: the cost per request
# of connections long decided (a socket-storage lookup per segment and
# per send), "connection" then reads "request".
# PLACE: where nginx runs. own (default): in a cgroup of its own, as a
# service manager or a container runtime starts a service, wrk in the
# bench's; the capture programs then run on nginx's segments only.
# shared: in the bench's cgroup with wrk (as in the tests), where they
# run on both ends' segments.
# SELECT: what kmond monitors. pid (default): this nginx, by its pid. all:
# every process (a config without services, as configs/kmond.yaml): the
# capture programs run in the root cgroup, on every segment of the host,
# both ends of each connection followed.
#   bench/protocol-conn.sh [ROUNDS] [SECONDS] [CONNECTIONS] [close|keepalive] [own|shared] [pid|all]
#   (as root, after make)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-5}
CONNS=${3:-8}
MODE=${4:-close}
PLACE=${5:-own}
SELECT=${6:-pid}
TARGET_NS=2000 # identification's CPU per connection, BPF + kmond
header=(-H "Connection: close")
[ "$MODE" = keepalive ] && header=()
PORT=18641
make -s build/kmond build/bench/floor_load || fail "cannot build kmond"
bench_init
CGROUP=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CGROUP" ] || fail "no cgroup v2 hierarchy (protocol identification needs one)"
source tests/lib/nginx.sh
if [ "$PLACE" = own ]; then
	NGINX_CGROUP=$CGROUP/kmond-bench-$$
	mkdir "$NGINX_CGROUP" || fail "cannot make cgroup $NGINX_CGROUP"
	trap 'bench_cleanup; rmdir "$NGINX_CGROUP"' EXIT
fi
start_nginx $PORT 1
# where the floor's empty programs go: where kmond's capture runs
FLOOR_CGROUP=${NGINX_CGROUP:-$CGROUP}
[ "$SELECT" = all ] && FLOOR_CGROUP=$CGROUP

load() { # "requests/s requests" (each request on a connection of its own)
	wrk -t1 -c"$CONNS" -d"${SECS}s" "${header[@]}" \
		"http://127.0.0.1:$PORT/text" >"$WORK/wrk.out"
	awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
}

start() { # false | true: kmond, protocols identified or not; floor
	if [ "$1" = floor ]; then # stopped by kmond_stop, measured alike
		floor_start floor.bpf.c "$FLOOR_CGROUP"
		return
	fi
	{
		echo "interval: 1s"
		[ "$SELECT" = all ] ||
			echo "services: [ { name: web, match: { pid: $NGINX_PID } } ]"
	} >"$WORK/kmond.yaml"
	cat >>"$WORK/kmond.yaml" <<YAML
collectors:
  tcp: { requests: none, protocols: $1 }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
	kmond_start "$WORK/kmond.yaml"
}

# kmond's run time in ns, over its threads
kmond_ns() { cat /proc/$KMOND_PID/task/*/schedstat | awk '{ ns += $1 } END { print ns }'; }

# bpf_stats on while this runs (BPF_ENABLE_STATS: another user's sysctl
# cannot turn it off meanwhile)
stats_on() {
	python3 -c '
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(16) # enable_stats.type = BPF_STATS_RUN_TIME
if libc.syscall(321, 32, attr, 16) < 0: # bpf(BPF_ENABLE_STATS)
    raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
print("on", flush=True)
signal.pause()' >"$WORK/stats.out" &
	STATS_PID=$!
	STARTED_PIDS+=($STATS_PID)
	until grep -q on "$WORK/stats.out"; do
		kill -0 $STATS_PID || fail "bpf_stats: $(cat "$WORK/stats.out")"
		sleep 0.05
	done
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
# median of the numbers on stdin, and their range
median() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.0f (%.0f .. %.0f)", m, v[1], v[NR] }'; }
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

R=$WORK/rounds # one line per round and mode: r mode conn/s conns cpu_ns bpf_ns
P=$WORK/progs  # one line per round, mode and program: r mode name ns runs
: >"$R"
: >"$P"
stats_on
load >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	for m in off false true floor; do
		c0=0 c1=0
		if [ $m != off ]; then
			start $m
			bpf_progs "" >"$WORK/before"
			c0=$(kmond_ns)
		fi
		read -r x n < <(load)
		if [ $m != off ]; then
			[ $m != floor ] && sleep 1.1 # the last interval's drain counts too
			c1=$(kmond_ns)
			bpf_progs "" >"$WORK/after"
			kmond_stop
			# per program: ns and runs during the load
			awk -v r=$r -v m=$m 'NR == FNR { ns[$1] = $2; n[$1] = $3; next }
				{ print r, m, $1, $2 - ns[$1], $3 - n[$1] }' \
				"$WORK/before" "$WORK/after" >>"$P"
		fi
		[ $m = floor ] && c1=$c0 # the loader only waits
		bpf=$(awk -v r=$r -v m=$m '$1 == r && $2 == m { s += $4 } END { print s + 0 }' "$P")
		echo "$r $m $x $n $((c1 - c0)) $bpf" >>"$R"
		echo "round $r $m: $x conn/s ($n connections)" \
			"kmond $(calc "($c1 - $c0) / $n" 0) ns, BPF $(calc "$bpf / $n" 0) ns per connection"
	done
done
kill $STATS_PID

# per_conn MODE PROG FIELD: PROG's FIELD (4: ns, 5: runs) per connection,
# one line per round
per_conn() {
	awk -v m=$1 -v p=$2 -v f=$3 'FNR == NR { if ($2 == m) c[$1] = $4; next }
		$2 == m && $3 == p { print $f / c[$1] }' "$R" "$P"
}
# floor_of PROG: the floor's ns per run on PROG's hook
floor_of() {
	local f
	case $1 in
	proto_ingress) f=proto_ingress_floor ;;
	tcp_send_entry_btf) f=tcp_send_entry_floor ;;
	tcp_state_btf) f=tcp_state_floor ;;
	tcp_recv_btf) f=tcp_recv_floor ;;
	tcp_send_btf) f=tcp_send_floor ;;
	*) echo -; return ;;
	esac
	awk -v p=$f '$2 == "floor" && $3 == p && $5 > 0 { print $4 / $5 }' "$P" | med
}

echo
echo "mode $MODE, $CONNS connections at a time, $ROUNDS rounds of ${SECS}s, nginx 1 worker" \
	"in ${NGINX_CGROUP:-the cgroup of the bench};" \
	"medians over rounds (range), per connection"
for m in false true; do
	echo "protocols: $m"
	echo "  throughput ratio to no kmond: $(awk -v m=$m '$2 == "off" { off[$1] = $3 } $2 == m { print $3 / off[$1] }' "$R" | med)"
	echo "  kmond CPU $(awk -v m=$m '$2 == m { print $5 / $4 }' "$R" | median) ns," \
		"BPF $(awk -v m=$m '$2 == m { print $6 / $4 }' "$R" | median) ns"
	echo "  BPF per program: ns per connection, runs per connection, floor (an empty program's ns per run on its hook)"
	for prog in $(awk -v m=$m '$2 == m && $5 > 0 { print $3 }' "$P" | sort -u); do
		printf "    %-24s %s ns, %s runs, floor %s\n" "$prog" \
			"$(per_conn $m $prog 4 | median)" "$(per_conn $m $prog 5 | med)" \
			"$(floor_of $prog | sed 's/[0-9]$/& ns/')"
	done
done
# what identification adds, true minus false of the same round
awk '$2 == "false" { k[$1] = $5 / $4; b[$1] = $6 / $4 }
	$2 == "true" { print $5 / $4 - k[$1], $6 / $4 - b[$1], $5 / $4 - k[$1] + $6 / $4 - b[$1] }' "$R" >"$WORK/delta"
echo "identification per connection (true - false by round): kmond CPU +$(cut -d' ' -f1 "$WORK/delta" | median) ns," \
	"BPF +$(cut -d' ' -f2 "$WORK/delta" | median) ns"
total=$(cut -d' ' -f3 "$WORK/delta" | med)
echo "TOTAL identification CPU per connection: $(calc "$total" 0) ns (range $(cut -d' ' -f3 "$WORK/delta" | median | sed 's/^[^(]*//')), target <= $TARGET_NS ns:" \
	"$(awk -v t="$total" -v g=$TARGET_NS 'BEGIN { print t <= g ? "met" : "NOT met" }')"
# bpf_stats' share: the floor of each run identification adds
# (its capture of sends runs inside tcp_send_entry_btf, which runs alike
# without it: no run of its own)
floor=$(calc "$(per_conn true proto_ingress 5 | med) * $(floor_of proto_ingress)" 0)
echo "  of which the floor of its programs' runs (bpf_stats' clock reads, the hooks): $floor ns;" \
	"above it: $(calc "$total - $floor" 0) ns"
echo "whole tcp collector with protocols per connection (BPF + kmond): $(awk '$2 == "true" { print ($5 + $6) / $4 }' "$R" | median) ns"
echo "endpoint records in the last run: $(grep -c '"kind":"endpoint"' "$WORK/out.json" || true)"
