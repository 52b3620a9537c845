#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What request outcomes (issue 41, collectors.tcp.outcomes) add to the
# tcp collector's cost per request, side by side in one run: nginx (1
# worker) under wrk on keep-alive connections, and Redis under
# redis-benchmark pipelining 16 commands (SET and GET). Both servers run
# in a cgroup of their own, as a service manager starts them; kmond
# watches the one under load (its pid), requests: all.
# Modes, alternating within each round (their order reversed every other
# round): off (no kmond), false (tcp, outcomes: false), true (tcp,
# outcomes: true). Per run and request: kmond's CPU (its threads' run
# time, /proc/PID/task/*/schedstat, from start-up done to exit begun, the
# last interval's drain included) and its BPF programs' run time during
# the load (bpf_stats held on through every round: the throughput ratios
# include its two clock reads per run). Prints, per workload, the medians
# over the rounds (range): throughput over the same round's run without
# kmond, kmond and BPF ns per request; then what outcomes add (true -
# false of the same round) as a share of false's cost (today's tcp cost
# per request), against the issue's bound of 15%.
# A request is one of wrk's, one of the benchmark's commands (a record
# may hold a pipelined burst: Redis's cost per command).
#   bench/outcome-cost.sh [ROUNDS] [SECONDS] [WRK_CONNECTIONS] [REDIS_COMMANDS]
#   (as root, after make; 10 rounds of 5 s, 16 connections, 400000)
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SECS=${2:-5}
CONNS=${3:-16}
COMMANDS=${4:-400000}
BOUND=15 # percent of today's cost per request outcomes may add
HTTP_PORT=18651
REDIS_PORT=18652
make -s build/kmond build/bench/bpf_stats_on || fail "cannot build kmond"
bench_init
CGROUP=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CGROUP" ] || fail "no cgroup v2 hierarchy"
NGINX_CGROUP=$CGROUP/kmond-outcome-$$
mkdir "$NGINX_CGROUP" || fail "cannot make cgroup $NGINX_CGROUP"
trap 'bench_cleanup; rmdir "$NGINX_CGROUP"' EXIT
source tests/lib/nginx.sh
start_nginx $HTTP_PORT 1
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$NGINX_CGROUP" \
	redis-server --port $REDIS_PORT --bind 127.0.0.1 --save '' \
	--appendonly no --daemonize no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
STARTED_PIDS+=($REDIS_PID)
for ((i = 0; i < 50; i++)); do
	redis-cli -p $REDIS_PORT ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p $REDIS_PORT ping >/dev/null || fail "redis: $(tail -3 "$WORK/redis.log")"

load() { # WORKLOAD: "requests/s requests"
	if [ "$1" = nginx ]; then
		wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$HTTP_PORT/text" >"$WORK/wrk.out"
		awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { print r, n }' "$WORK/wrk.out"
		return
	fi
	local t0 t1
	t0=$(date +%s%N)
	redis-benchmark -p $REDIS_PORT -c 4 -P 16 -n $((COMMANDS / 2)) -t set,get -q \
		>"$WORK/redis-bench.out" || fail "redis-benchmark"
	t1=$(date +%s%N)
	awk -v n=$COMMANDS -v ns=$((t1 - t0)) 'BEGIN { print n * 1e9 / ns, n }'
}

start() { # WORKLOAD false|true|before
	local pid=$NGINX_PID bin=build/kmond switch=", outcomes: $2"
	[ "$1" = redis ] && pid=$REDIS_PID
	[ "$2" = before ] && bin=$KMOND_BEFORE switch=
	rm -f "$WORK/out.json"
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services: [ { name: server, match: { pid: $pid } } ]
collectors:
  tcp: { requests: all$switch }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML
	kmond_launch "$bin" "$WORK/stdout" "$WORK/err" "$WORK/kmond.yaml" ||
		fail "kmond: $(tail -3 "$WORK/err")"
}

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
# median (range) of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.0f (%.0f .. %.0f)", m, v[1], v[NR] }'; }
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

R=$WORK/rounds # one line per run: round workload mode req/s requests kmond_ns bpf_ns
: >"$R"
P=$WORK/progs # one line per run and program: round workload mode name ns/request runs/request
: >"$P"
bpf_stats_hold
load nginx >/dev/null # warm up
for ((r = 1; r <= ROUNDS; r++)); do
	modes="off false true${KMOND_BEFORE:+ before}"
	((r % 2)) || modes=$(tr ' ' '\n' <<<"$modes" | tac | tr '\n' ' ')
	for w in nginx redis; do
		for m in $modes; do
			c0=0 c1=0 b0=0 b1=0
			if [ $m != off ]; then
				start $w $m
				bpf_progs "" >"$WORK/before"
				c0=$(proc_cpu_ns "$KMOND_PID")
			fi
			read -r x n < <(load $w)
			if [ $m != off ]; then
				bpf_progs "" >"$WORK/after"
				sleep 1.1 # the last interval's drain counts too
				c1=$(proc_cpu_ns "$KMOND_PID")
				kmond_stop
				# per program: ns and runs per request during the load
				awk -v p="$r $w $m" -v n=$n 'NR == FNR { ns[$1] = $2; c[$1] = $3; next }
					{ print p, $1, ($2 - ns[$1]) / n, ($3 - c[$1]) / n }' \
					"$WORK/before" "$WORK/after" >>"$P"
				read -r b0 b1 < <(awk -v p="$r $w $m" -v n=$n \
					'$1 " " $2 " " $3 == p { s += $5 * n } END { printf "0 %.0f\n", s }' "$P")
			fi
			echo "$r $w $m $x $n $((c1 - c0)) $((b1 - b0))" >>"$R"
			echo "round $r $w $m: $x req/s ($n requests)," \
				"kmond $(calc "($c1 - $c0) / $n" 0) ns, BPF $(calc "($b1 - $b0) / $n" 0) ns per request"
		done
	done
done
bpf_stats_release

echo
echo "$ROUNDS rounds; nginx: wrk ${SECS}s, $CONNS keep-alive connections; redis: $COMMANDS commands," \
	"4 connections, pipelines of 16; medians over the rounds (range), per request"
printf "%-7s %-7s %10s %22s %22s %22s\n" workload mode "tput/off" "kmond ns" "BPF ns" "total ns"
# delta WORKLOAD A B: per round, A - B per request (kmond, BPF, both)
# and both as a percentage of B's
delta() {
	awk -v w=$1 -v a=$2 -v b=$3 'NR == FNR { if ($2 == w && $3 == b) { k[$1] = $6 / $5; p[$1] = $7 / $5 }; next }
		$2 == w && $3 == a { dk = $6 / $5 - k[$1]; dp = $7 / $5 - p[$1]
			print dk, dp, dk + dp, 100 * (dk + dp) / (k[$1] + p[$1]) }' "$R" "$R" >"$WORK/delta"
	echo "$(calc "$(cut -d' ' -f4 "$WORK/delta" | med)" 1)"
}
verdict=0
for w in nginx redis; do
	for m in false true ${KMOND_BEFORE:+before}; do
		printf "%-7s %-7s %10s %22s %22s %22s\n" $w $m \
			"$(awk -v w=$w -v m=$m 'NR == FNR { if ($2 == w && $3 == "off") off[$1] = $4; next }
				$2 == w && $3 == m { print $4 / off[$1] }' "$R" "$R" | med)" \
			"$(awk -v w=$w -v m=$m '$2 == w && $3 == m { print $6 / $5 }' "$R" | median)" \
			"$(awk -v w=$w -v m=$m '$2 == w && $3 == m { print $7 / $5 }' "$R" | median)" \
			"$(awk -v w=$w -v m=$m '$2 == w && $3 == m { print ($6 + $7) / $5 }' "$R" | median)"
	done
	echo "$w: BPF per program, ns per request (runs per request), median over the rounds:"
	for prog in $(awk -v w=$w '$2 == w && $6 > 0 { print $4 }' "$P" | sort -u); do
		line=$(printf "  %-24s" "$prog")
		for m in false true ${KMOND_BEFORE:+before}; do
			line+=$(printf " %8s %-14s" $m "$(awk -v w=$w -v m=$m -v p=$prog \
				'$2 == w && $3 == m && $4 == p { print $5 }' "$P" | med | xargs printf "%.0f") ($(awk -v w=$w -v m=$m -v p=$prog \
				'$2 == w && $3 == m && $4 == p { print $6 }' "$P" | med | xargs printf "%.2f"))")
		done
		echo "$line"
	done
	for b in false ${KMOND_BEFORE:+before}; do
		share=$(delta $w true $b)
		echo "$w: true - $b (same round): kmond $(cut -d' ' -f1 "$WORK/delta" | median) ns," \
			"BPF $(cut -d' ' -f2 "$WORK/delta" | median) ns," \
			"total $(cut -d' ' -f3 "$WORK/delta" | median) ns per request:" \
			"$share% of $b's (range $(cut -d' ' -f4 "$WORK/delta" | median | sed 's/^[^(]*//'))"
		# the bound is against today's tcp cost (outcomes false); a
		# KMOND_BEFORE build is a change's comparison, not the bound's
		[ $b = false ] || continue
		if awk -v s="$share" -v b=$BOUND 'BEGIN { exit !(s <= b) }'; then
			echo "$w: bound $BOUND% of $b's: met"
		else
			echo "$w: bound $BOUND% of $b's: NOT met"
			verdict=1
		fi
	done
done
exit $verdict
