#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmond side by side with the tools an operator would otherwise run, on
# the same workloads, alternating within each round (without any tool,
# kmond, each peer), several rounds. Per row and tool: the workload's cost
# per event (ns; lower is better) and its slowdown over the same round's
# run without a tool (the BPF programs run inside the workload, so their
# cost shows here), and the tool's own CPU per event (utime + stime of its
# process, wait4's rusage, from attach until it has exited, its final
# report included), also net of what the tool uses attached as long without the
# workload (its intervals and its exit: a peer that only reports at exit
# spends nothing per second). Medians over the rounds, with [min .. max]:
# the machine is shared, single runs are noise. At the end, per row,
# kmond beside each peer.
#   bench/peers.sh [ROUNDS] [ROWS...]   (as root, after make; 10 rounds by default)
# SECS (default 3), CALLS (10000000), IOS (16384) size the runs;
# BPF_ROUNDS (5) the latency row's rounds timed by bpf_stats (below).
# ROWS: offcpu syscall bio tcp latency (default: all). Every tool traces
# every process, as kmond does here (no services: all are monitored),
# except the tcp rows, where kmond and bpftrace follow nginx only.
# A peer that cannot run on this kernel (kprobes or fentry refused) is
# printed as "n/a (reason)".
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
shift || true
ROWS=${*:-offcpu syscall bio tcp latency}
SECS=${SECS:-3}
CALLS=${CALLS:-10000000}
IOS=${IOS:-16384}
PORT=18632
scripts/install-deps.sh --if-missing bench
make -s build/tests/kmt_getppid build/tests/kmt_pingpong build/bench/cpu_of ||
	fail "cannot build the workloads"
# On the disk that holds the build (O_DIRECT: not a tmpfs).
bench_init "$PWD/build/peers-bench.XXXXXX"
cp build/tests/kmt_getppid "$WORK/kmt_bench"
cp build/tests/kmt_pingpong "$WORK/kmt_pingpong"
# A tool still running when the script stops: ended, then bench_cleanup.
peers_cleanup() {
	[ -n "${TOOL_PID:-}" ] && kill -TERM "$TOOL_PID" 2>/dev/null && wait "$TOOL_PID" 2>/dev/null
	bench_cleanup
}
trap peers_cleanup EXIT

# --- workloads: each prints "NS_PER_EVENT EVENTS" ---
w_offcpu() { # pinned pipe ping-pong: 2 switches per round trip
	local rate
	rate=$("$WORK/kmt_pingpong" "$SECS" --cpu 0 --work 0 | awk '{ print $6 }')
	awk -v r="$rate" -v s="$SECS" 'BEGIN { printf "%.1f %d\n", 1e9 / (2 * r), 2 * r * s }'
}
w_syscall() { # getppid storm
	local t0 t1
	t0=$(date +%s%N)
	"$WORK/kmt_bench" "$CALLS"
	t1=$(date +%s%N)
	awk -v d=$((t1 - t0)) -v n="$CALLS" 'BEGIN { printf "%.1f %d\n", d / n, n }'
}
w_bio() { # 4 KiB O_DIRECT reads of a file written once
	local t0 t1
	t0=$(date +%s%N)
	dd if="$WORK/file" of=/dev/null bs=4k count="$IOS" iflag=direct 2>/dev/null
	t1=$(date +%s%N)
	awk -v d=$((t1 - t0)) -v n="$IOS" 'BEGIN { printf "%.1f %d\n", d / n, n }'
}
wrk_run() { # wrk's ns per request (1 / throughput) and request count
	wrk -t1 -c64 -d"${SECS}s" "$@" "http://127.0.0.1:$PORT/" |
		awk '/requests in/ { n = $1 } /^Requests\/sec/ { r = $2 } END { printf "%.1f %d\n", 1e9 / r, n }'
}
w_tcp() { wrk_run -H "Connection: close"; } # a connection per request
w_latency() { wrk_run; }                    # keep-alive requests

# --- tools: start_TOOL ROW starts it and sets TOOL_PID (or returns 1
# with the reason in $WORK/why); stop_tool sets TOOL_NS, its CPU since it
# attached.
TOOL_PID=
T0=0
kmond_yaml() { # ROW [REQUESTS [MORE TCP KEYS]]
	{
		echo "interval: 1s"
		case $1 in
		tcp | latency) printf 'services:\n  - { name: web, match: { comm: nginx } }\n' ;;
		esac
		echo "collectors:"
		case $1 in
		offcpu) echo "  offcpu: { enabled: true, state: sleep, min_block: 1ms }" ;;
		syscall) echo "  syscall: { enabled: true }" ;;
		bio) echo "  bio: { enabled: true }" ;;
		tcp | latency) echo "  tcp: { requests: ${2:-all}${3:+, $3} }" ;;
		esac
		echo "exporters:"
		echo "  - { type: file, path: \"$WORK/out.json\" }"
	} >"$WORK/kmond.yaml"
}
start_kmond() { # ROW [REQUESTS [MORE TCP KEYS]]
	kmond_yaml "$@"
	start_peer build/kmond -c "$WORK/kmond.yaml"
}
# A tool in the background under build/bench/cpu_of, which writes the CPU
# it used once it has exited (wait4's rusage, in ns: `times` and
# /proc/PID/stat count 10 ms ticks, as much as some tools use in a whole
# run). Attached once it says so (kmond: "running on", bpftrace:
# "Attaching"), the others after 2 s, unless it exited.
start_peer() {
	local i
	# kmond's records of this run alone (see tcp-nginx.sh's start)
	rm -f "$WORK/cpu" "$WORK/cpu.pid" "$WORK/out.json"
	build/bench/cpu_of "$WORK/cpu" "$@" >"$WORK/peer.out" 2>&1 &
	WRAP_PID=$!
	for ((i = 0; i < 300; i++)); do
		[ -s "$WORK/cpu.pid" ] && break
		sleep 0.01
	done
	TOOL_PID=$(cat "$WORK/cpu.pid")
	for ((i = 0; i < 300; i++)); do
		if [ -e "$WORK/cpu" ]; then
			wait "$WRAP_PID" 2>/dev/null || true
			grep -m1 -iE 'fail|error|not|invalid|invaild' "$WORK/peer.out" >"$WORK/why" ||
				tail -1 "$WORK/peer.out" >"$WORK/why"
			TOOL_PID=
			return 1
		fi
		case $1 in
		build/kmond) grep -q "running on" "$WORK/peer.out" && return 0 ;;
		bpftrace) grep -q Attaching "$WORK/peer.out" "$WORK/lines.out" 2>/dev/null &&
			sleep 0.5 && return 0 ;;
		*) [ "$i" -ge 20 ] && return 0 ;;
		esac
		sleep 0.1
	done
	echo "no attach in 30 s" >"$WORK/why"
	kill -INT "$TOOL_PID"
	wait "$WRAP_PID" 2>/dev/null || true
	TOOL_PID=
	return 1
}
# SIGINT (the peers print their report on it; kmond on SIGTERM); its CPU
# from cpu_of, its final report included, minus what it had used when it
# attached (T0): in TOOL_NS (not a $(...): only this shell can wait).
stop_tool() {
	local sig=INT
	[ "$1" = kmond ] && sig=TERM
	kill -"$sig" "$TOOL_PID"
	wait "$WRAP_PID" 2>/dev/null || true
	TOOL_PID=
	TOOL_NS=$(($(cat "$WORK/cpu") - T0))
}

# Per-request latency on the same tracepoints, as a histogram (beside
# kmond with requests: none, which keeps per-edge histograms: with every
# default on, kmond-hist, and with only what the script measures,
# kmond-lat: no protocol identification, whose capture runs on two more
# hooks, no client side, whose stamps run on a third (responses are then
# stamped where the script stamps them, as the send returns), no load
# accounting and no request paths) and as a line per request (beside
# requests: all, a record per request).
BT_LATENCY='
tracepoint:sock:sock_recv_length /comm == "nginx" && args->ret > 0/ {
	@start[args->sk] = nsecs;
}
tracepoint:sock:sock_send_length /comm == "nginx" && @start[args->sk]/ {
	@us = hist((nsecs - @start[args->sk]) / 1000);
	delete(@start[args->sk]);
}'
BT_LINES='
tracepoint:sock:sock_recv_length /comm == "nginx" && args->ret > 0/ {
	@start[args->sk] = nsecs;
}
tracepoint:sock:sock_send_length /comm == "nginx" && @start[args->sk]/ {
	printf("%d %d %llu\n", pid, tid, nsecs - @start[args->sk]);
	delete(@start[args->sk]);
}'
# kmond's modes and the peers of each row, and which mode a peer is
# beside (a histogram beside a histogram, a line per request beside a
# record per request).
kmonds() {
	case $1 in
	latency) echo "kmond kmond-hist kmond-lat" ;;
	*) echo "kmond" ;;
	esac
}
peers() {
	case $1 in
	offcpu) echo "offcputime" ;;
	syscall) echo "syscount" ;;
	bio) echo "biolatency biosnoop" ;;
	tcp) echo "tcplife tcptop" ;;
	latency) echo "bpftrace bpftrace-lines" ;;
	esac
}
beside() { [ "$1" = bpftrace ] && echo kmond-hist kmond-lat || echo kmond; }
start_tool() { # ROW TOOL
	case $2 in
	kmond) start_kmond "$1" ;;
	kmond-hist) start_kmond "$1" none ;;
	kmond-lat) start_kmond "$1" none \
		"protocols: false, client: false, load: false, paths: false" ;;
	offcputime) start_peer /usr/sbin/offcputime ;;
	syscount) start_peer /usr/sbin/syscount ;;
	biolatency) start_peer /usr/sbin/biolatency ;;
	biosnoop) start_peer /usr/sbin/biosnoop ;;
	tcplife) start_peer /usr/sbin/tcplife ;;
	tcptop) start_peer /usr/sbin/tcptop -C 1 ;;
	bpftrace) start_peer bpftrace -e "$BT_LATENCY" ;;
	bpftrace-lines)
		rm -f "$WORK/lines.out"
		start_peer bpftrace -o "$WORK/lines.out" -e "$BT_LINES"
		;;
	esac
}

declare -A cost added slow cpu net idle na

for row in $ROWS; do
	case $row in
	offcpu | syscall | bio | tcp | latency) ;;
	*) fail "unknown row '$row' (offcpu syscall bio tcp latency)" ;;
	esac
	if [ "$row" = bio ]; then
		dd if=/dev/urandom of="$WORK/file" bs=1M count=$((IOS / 256)) oflag=direct status=none
		w_bio >/dev/null # warm up (the first pass ran slower)
	fi
	if [ "$row" = tcp ] || [ "$row" = latency ]; then
		if [ -z "${NGINX_STARTED:-}" ]; then
			source tests/lib/nginx.sh
			start_nginx $PORT 1
			NGINX_STARTED=1
		fi
		wrk_run >/dev/null # warm up
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		read -r base _ < <("w_$row")
		line="round $r $row: none $base"
		for tool in $(kmonds "$row") $(peers "$row"); do
			[ -n "${na[$row/$tool]:-}" ] && continue
			if ! start_tool "$row" "$tool"; then
				na[$row/$tool]="n/a ($(head -c 100 "$WORK/why"))"
				continue
			fi
			T0=$(proc_cpu_ns "$TOOL_PID")
			t0=$(date +%s%N)
			read -r ns events < <("w_$row")
			wall=$(($(date +%s%N) - t0))
			stop_tool "$tool"
			loaded=$TOOL_NS
			# The same tool attached as long without the workload: what
			# it costs without events (intervals, its exit).
			start_tool "$row" "$tool" || fail "$tool: $(cat "$WORK/why")"
			T0=$(proc_cpu_ns "$TOOL_PID")
			sleep "$(awk -v w="$wall" 'BEGIN { printf "%.3f", w / 1e9 }')"
			stop_tool "$tool"
			cost[$row/$tool]+=" $ns"
			added[$row/$tool]+=" $(awk -v a="$base" -v b="$ns" 'BEGIN { printf "%.1f", b - a }')"
			slow[$row/$tool]+=" $(awk -v a="$base" -v b="$ns" 'BEGIN { printf "%.2f", (b - a) * 100 / a }')"
			cpu[$row/$tool]+=" $(awk -v t="$loaded" -v n="$events" 'BEGIN { printf "%.1f", t / n }')"
			net[$row/$tool]+=" $(awk -v t="$loaded" -v i="$TOOL_NS" -v n="$events" 'BEGIN { printf "%.1f", (t - i) / n }')"
			idle[$row/$tool]+=" $(awk -v i="$TOOL_NS" -v w="$wall" 'BEGIN { printf "%.0f", i / w * 1e6 }')"
			line+=", $tool $ns"
		done
		cost[$row/none]+=" $base"
		echo "$line (ns per event)"
	done
done

# The latency row's tools run their programs inside nginx and wrk, whose
# wall time per request moves by more from one run to the next than the
# programs cost: bpf_stats times the programs themselves (run_time_ns of
# every program the tool holds, over the workload, per request), in
# BPF_ROUNDS more rounds (5), alternating the same way, after the others
# (bpf_stats adds two clock reads to every run).
BPF_ROUNDS=${BPF_ROUNDS:-5}
BPF_TOOLS="$(beside bpftrace) bpftrace"
declare -A bpf_ns
tool_bpf_ns() { # the run time of TOOL_PID's programs so far
	[ -n "$({ grep -h '^prog_id:' /proc/"$TOOL_PID"/fdinfo/* 2>/dev/null || true; })" ] ||
		fail "no BPF programs held by $TOOL_PID"
	KMOND_PID=$TOOL_PID bpf_cost "" | awk '{ print $1 }'
}
if [[ " $ROWS " = *" latency "* ]] && [ "$BPF_ROUNDS" -gt 0 ]; then
	bpf_stats_hold
	for ((r = 1; r <= BPF_ROUNDS; r++)); do
		line="bpf round $r latency:"
		for tool in $BPF_TOOLS; do
			[ -n "${na[latency/$tool]:-}" ] && continue
			start_tool latency "$tool" || fail "$tool: $(cat "$WORK/why")"
			ns0=$(tool_bpf_ns)
			read -r _ events < <(w_latency)
			ns1=$(tool_bpf_ns)
			stop_tool "$tool"
			bpf_ns[$tool]+=" $(awk -v a="$ns0" -v b="$ns1" -v n="$events" 'BEGIN { printf "%.0f", (b - a) / n }')"
			line+=" $tool ${bpf_ns[$tool]##* }"
		done
		echo "$line (BPF ns per request)"
	done
	bpf_stats_release
fi

echo
echo "$ROUNDS rounds, modes alternating within each round; median [min .. max] over rounds."
echo "ns/event: the workload's wall time per event; added: over the same round's run without a tool"
echo "(the BPF programs run inside the workload: their cost shows here), also as a slowdown in %."
echo "tool CPU/event: the tool's utime + stime from attach to exit (wait4's rusage) / the workload's"
echo "events; net: minus what the same tool used attached as long without the workload (its"
echo "intervals, its exit), which is also given per second (idle us/s)."
printf '%-8s %-14s %-27s %-24s %-24s %-22s %-22s %s\n' row tool "ns/event" "added ns/event" \
	"slowdown %" "tool CPU ns/event" "net CPU ns/event" "idle us/s"
for row in $ROWS; do
	# shellcheck disable=SC2086
	printf '%-8s %-14s %-27s\n' "$row" none "$(median_spread ${cost[$row/none]})"
	for tool in $(kmonds "$row") $(peers "$row"); do
		if [ -n "${na[$row/$tool]:-}" ]; then
			printf '%-8s %-14s %s\n' "$row" "$tool" "${na[$row/$tool]}"
			continue
		fi
		# shellcheck disable=SC2086
		printf '%-8s %-14s %-27s %-24s %-24s %-22s %-22s %s\n' "$row" "$tool" \
			"$(median_spread ${cost[$row/$tool]})" "$(median_spread ${added[$row/$tool]})" \
			"$(median_spread ${slow[$row/$tool]})" "$(median_spread ${cpu[$row/$tool]})" \
			"$(median_spread ${net[$row/$tool]})" "$(median_spread ${idle[$row/$tool]})"
	done
done
echo
echo "kmond beside each peer (medians): the peer's added ns/event over kmond's (> 1: kmond is"
echo "cheaper on the workload), and net tool CPU per event, peer minus kmond (> 0: kmond cheaper)."
median() { median_spread "$@" | awk '{ print $1 }'; }
for row in $ROWS; do
	for tool in $(peers "$row"); do
		for k in $(beside "$tool"); do
			[ -n "${na[$row/$tool]:-}" ] || [ -n "${na[$row/$k]:-}" ] && continue
			# shellcheck disable=SC2086
			printf '%-8s %-14s beside %-10s added x%-8s net CPU %+.1f ns/event\n' "$row" "$tool" "$k" \
				"$(awk -v p="$(median ${added[$row/$tool]})" -v k="$(median ${added[$row/$k]})" \
					'BEGIN { if (k > 0) printf "%.2f", p / k; else print "inf" }')" \
				"$(awk -v p="$(median ${net[$row/$tool]})" -v k="$(median ${net[$row/$k]})" \
					'BEGIN { print p - k }')"
		done
	done
done
if [ -n "${bpf_ns[bpftrace]:-}" ]; then
	echo
	echo "latency: BPF time per request of each tool's programs (bpf_stats), median [min .. max] of $BPF_ROUNDS rounds:"
	for tool in $BPF_TOOLS; do
		[ -n "${bpf_ns[$tool]:-}" ] || continue
		# shellcheck disable=SC2086
		printf '  %-14s %s ns\n' "$tool" "$(median_spread ${bpf_ns[$tool]})"
	done
	for k in $(beside bpftrace); do
		[ -n "${bpf_ns[$k]:-}" ] || continue
		# shellcheck disable=SC2086
		printf '  bpftrace beside %-10s x%s\n' "$k" \
			"$(awk -v p="$(median ${bpf_ns[bpftrace]})" -v k="$(median ${bpf_ns[$k]})" 'BEGIN { printf "%.2f", p / k }')"
	done
fi
echo "events: offcpu = context switches (ping-pong pinned to CPU 0), syscall = getppid calls,"
echo "bio = 4 KiB O_DIRECT reads, tcp = requests with Connection: close (a connection each),"
echo "latency = keep-alive requests (bpftrace: recv->send per socket on sock_recv/send_length, as a"
echo "histogram beside kmond with requests: none (kmond-hist: defaults; kmond-lat: protocols: false,"
echo "client: false, load: false, paths: false, what the script measures), as a line per request"
echo "beside requests: all)."
