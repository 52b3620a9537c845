# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared by bench/fleet.sh and bench/topo_fleet.sh (sourced from the
# repository root, after make): the loopback broker, and at exit every
# member in pids, the broker and the work directory gone.
#   fleet_broker_start NAME   sets work (mktemp -d /tmp/NAME.XXXXXX) and
#                             brokers (the broker's address)
#   cmd LINE                  a command to the broker (tests/helpers/kafka_broker.c)
#   fleet_rounds PREFIX       ROUNDS rounds of `run PREFIX<round>-m<N> N`
#                             (the script's) for each N of MEMBERS, the
#                             groups alternating within a round; their
#                             lines to $work/runs.jsonl
#   fleet_stop PID...         members stopped (SIGTERM) and waited for
#   fleet_member NAME CMD...  (in the background) CMD as a member: with
#                             MEMBER_CPU set (cores, like 0.3), in a
#                             cgroup of its own capped at that much CPU
#                             (tests/lib/cpu_cap.sh): as if each member
#                             had a machine of that size, the broker
#                             and the script beside them
#   fleet_table RUNS RECORDS ROWS  the table of the runs (JSON lines:
#                             members, group, first_s, read_s, cpu_s,
#                             rss_mib per member) by members, medians of
#                             the rounds; ROWS gets fleet_svg.py's rows

source tests/lib/cpu_cap.sh
pids=()

fleet_broker_start() {
	work=$(mktemp -d "/tmp/$1.XXXXXX")
	mkfifo "$work/in"
	"$BUILD/tests/kafka_broker" -p 0 <"$work/in" >"$work/broker.out" 2>"$work/broker.err" &
	broker=$!
	exec 9>"$work/in"
	trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; exec 9>&-;
		kill $broker 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; cpu_cap_gone' EXIT
	[ -z "${MEMBER_CPU:-}" ] || cpu_cap_ready ||
		{ echo "MEMBER_CPU: no cgroup's cpu controller here" >&2; exit 1; }
	for _ in $(seq 50); do
		brokers=$(awk '/^bootstrap /{print $2}' "$work/broker.out")
		[ -n "$brokers" ] && break
		sleep 0.1
	done
}

cmd() { echo "$1" >&9; sleep 0.2; }

fleet_rounds() {
	local r n
	for ((r = 1; r <= ROUNDS; r++)); do
		for n in $MEMBERS; do
			run "$1$r-m$n" "$n" | tee -a "$work/runs.jsonl"
		done
	done
	echo "load after: $(cat /proc/loadavg)"
}

fleet_stop() {
	local p
	for p; do kill -TERM "$p"; done
	for p; do wait "$p" || true; done
}

fleet_table() {
	python3 - "$@" <<'PY'
import collections, statistics, sys
sys.path.insert(0, "bench")
from fleet_runs import by_group
records = int(sys.argv[2])
rows = collections.defaultdict(list)
for n, ms in by_group(sys.argv[1]):
    # read at once (first_s == read_s): faster than the script can tell
    read = ms[0]["read_s"] - ms[0]["first_s"]
    cpu = sum(m["cpu_s"] for m in ms)
    rows[n].append((records / read if read > 0 else None,
                    records / read / n if read > 0 else None,
                    records / cpu, max(m["rss_mib"] for m in ms)))
def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
def show(v, fmt):
    return "too fast to tell" if v is None else format(v, fmt)
print("| members | records/s (group) | records/s per member | records per CPU-second | peak RSS per member, MiB |")
print("|---|---|---|---|---|")
with open(sys.argv[3], "w") as svg:
    for n in sorted(rows):
        med = [median(x[i] for x in rows[n]) for i in range(4)]
        print(f"| {n} | {show(med[0], ',.0f')} | {show(med[1], ',.0f')} | {med[2]:,.0f} | {med[3]:.0f} |")
        if med[0] is not None:
            svg.write(f"{n}:{med[0]:.0f}:{med[1]:.0f}:{med[2]:.0f}\n")
PY
}

fleet_member() {
	local name=$1
	shift
	[ -z "${MEMBER_CPU:-}" ] || cpu_capped "$name" "$MEMBER_CPU" "$@"
	exec "$@"
}
