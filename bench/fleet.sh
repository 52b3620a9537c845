#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace --fleet on a simulated fleet (bench/fleet_gen.c) through the
# loopback broker (build/tests/kafka_broker, librdkafka's mock cluster).
#
# Throughput: REQUESTS front requests of NODES nodes (about 16.7 tcp
# records each) are written to kmon.tcp (PARTITIONS partitions) first;
# then groups of 1, 2 and 4 members (MEMBERS) read all of it, each group
# from the start: per member, the records its stage 1 read, the wall time
# until the group had read them all, its CPU (utime + stime from /proc;
# stage 1's thread and the main thread, stage 2's, apart; the broker's
# too) and its peak RSS; then the time and CPU until stage 2 held every
# span (both stages done, while the first table is stage 1's rate);
# ROUNDS rounds, the groups alternating within a round. Last, what
# crossed Kafka more than once (the members' counts, summed).
# The floor: bench/kafka_pass.c, what one process that does nothing but
# consume each record and produce it on (as stage 1 does) reads, ROUNDS
# times first.
# Accuracy: the traces of the last round's groups against the ground
# truth (bench/fleet_score.py: precision and recall of the parent links
# across nodes, trace ids, every span once).
#   bench/fleet.sh                (after make and make test's helpers)
# Environment: NODES (1000), REQUESTS (25000), RATE (20000 front
# requests a second of the application's time: 1.25 s of it, about 330k
# records a second), PARTITIONS (64: the mock cluster keeps about 5 MB a
# partition, the stream must fit), MEMBERS ("1 2 4"), ROUNDS (3), QUIET
# (10: seconds, longer than the slowest group takes to read the spread of
# one trace, which the nodes' lag of up to 2 s makes most of the stream),
# MAX_SPANS (kmon-trace's --max-spans, 1000000: the memory bound),
# FLEET_SVG (a file: the figure of throughput against members), PERF (a
# file: the profile of the last round's one member while it reads,
# perf record -g, by thread, library and function; linux-perf),
# MEMBER_CPU (cores, like 0.3: each member capped at that much CPU in a
# cgroup of its own, as if on a machine of that size: the scaling this
# 2-core machine can show, the broker and the script beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NODES=${NODES:-1000}
REQUESTS=${REQUESTS:-25000}
RATE=${RATE:-20000}
PARTITIONS=${PARTITIONS:-64}
MEMBERS=${MEMBERS:-1 2 4}
ROUNDS=${ROUNDS:-3}
QUIET=${QUIET:-10}
MAX_SPANS=${MAX_SPANS:-1000000}
make -s "$BUILD/kmon-trace" "$BUILD/bench/fleet_gen" "$BUILD/bench/kafka_pass" \
	"$BUILD/tests/kafka_broker" >/dev/null

source bench/fleet_lib.sh
fleet_broker_start fleet-bench
cmd "topic kmon.tcp $PARTITIONS"
echo "load before: $(cat /proc/loadavg), $(nproc) cores"
"$BUILD/bench/fleet_gen" -b "$brokers" -t "$work/truth" -n "$NODES" \
	-r "$REQUESTS" -R "$RATE" -f -s 7
RECORDS=$(awk '$5 == 1' "$work/truth" | wc -l)
got=$(kcat -C -b "$brokers" -t kmon.tcp -o beginning -e -q -f '.\n' | wc -l)
[ "$got" = "$RECORDS" ] || { echo "kmon.tcp holds $got of $RECORDS records: more PARTITIONS" >&2; exit 1; }
echo "$RECORDS records in kmon.tcp"
# The Kafka floor: what one process that only passes each record on
# (consumed, produced unread, as stage 1 sends every record on) reads.
for ((r = 1; r <= ROUNDS; r++)); do
	echo "floor: $("$BUILD/bench/kafka_pass" "$brokers" kmon.tcp "$RECORDS")"
done


# run GROUP N: N members read everything; prints one JSON line per member
run() {
	local g=$1 n=$2 i t0
	cmd "topic kmon.$g.exchange $PARTITIONS"
	cmd "topic kmon.$g.span $PARTITIONS"
	local mp=()
	for ((i = 0; i < n; i++)); do
		fleet_member "$g.$i" "$BUILD/kmon-trace" -b "$brokers" -g "$g" --fleet --quiet "$QUIET" \
			--late $((QUIET + 5)) --max-spans "$MAX_SPANS" --stats 0.1 -X session.timeout.ms=6000 \
			-X heartbeat.interval.ms=500 -o "$work/$g.$i.otlp" \
			2>"$work/$g.$i.err" &
		mp+=($!)
		pids+=($!)
	done
	local prof=
	if [ -n "${PERF:-}" ] && [ "$n" = 1 ] && [ "$g" = "r$ROUNDS-m1" ]; then
		perf record -g -o "$work/perf.data" -p "${mp[0]}" 2>/dev/null &
		prof=$!
	fi
	t0=$(date +%s.%N)
	BROKER_PID=$broker PERF_PID=$prof python3 - "$work" "$g" "$n" "$RECORDS" "$t0" "${mp[@]}" <<'PY'
import json, os, sys, time
work, g, n, records, t0 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
pids = sys.argv[6:]
tick = os.sysconf("SC_CLK_TCK")
def last(i):
    try:
        lines = [l for l in open(f"{work}/{g}.{i}.err") if l.startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def main_cpu(pid):
    # the main thread: stage 2 (and the traces written)
    return cpu(f"{pid}/task/{pid}")
def stage1_cpu(pid):
    # stage 1's thread; the others are librdkafka's
    for t in os.listdir(f"/proc/{pid}/task"):
        if open(f"/proc/{pid}/task/{t}/comm").read().strip() == "kmon-stage1":
            return cpu(f"{pid}/task/{t}")
    return None
def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM"):
            return int(l.split()[1]) / 1024
# the broker's CPU while the group reads: the mock cluster does the
# broker's side of every crossing of Kafka
broker = os.environ["BROKER_PID"]
broker_t0 = cpu(broker)
read_at = first = gathered_at = None
while time.time() - t0 < 300:
    st = [last(i) for i in range(n)]
    got = sum(s["records"] for s in st if s)
    if first is None and got:
        first = time.time() - t0  # the group formed: reading begins
    if read_at is None and got >= records:
        read_at = time.time() - t0
        cpus = [cpu(p) for p in pids]
        mains = [main_cpu(p) for p in pids]
        stage1s = [stage1_cpu(p) for p in pids]
        broker_cpu = cpu(broker) - broker_t0
        if os.environ["PERF_PID"]:  # the profile is of the reading
            os.kill(int(os.environ["PERF_PID"]), 2)
    written = sum(s["spans_written"] for s in st if s)
    # every span with stage 2 (open or written): both stages done
    held = written + sum(s["open_spans"] for s in st if s)
    if read_at and gathered_at is None and held >= records:
        gathered_at = time.time() - t0
        gathered_cpus = [cpu(p) for p in pids]
    if read_at and written >= records:
        break
    time.sleep(0.1)
done_at = time.time() - t0
if read_at is None:
    sys.exit(f"{g}: read {got} of {records} records in 300 s")
for i, p in enumerate(pids):
    s = last(i)
    print(json.dumps({"group": g, "members": n, "member": i,
                      "records": s["records"], "first_s": round(first, 2),
                      "read_s": round(read_at, 2),
                      "gathered_s": round(gathered_at or done_at, 2),
                      "done_s": round(done_at, 2), "cpu_s": cpus[i],
                      "gathered_cpu_s": gathered_cpus[i] if gathered_at else None,
                      "main_cpu_s": mains[i], "stage1_cpu_s": stage1s[i],
                      "broker_cpu_s": round(broker_cpu, 2),
                      "rss_mib": round(hwm(p), 1),
                      "spans_written": s["spans_written"]}))
PY
	if [ -n "$prof" ]; then
		kill -INT "$prof" 2>/dev/null || true # stopped once read
		wait "$prof" || true
		perf report -i "$work/perf.data" --no-children --sort comm,dso,sym \
			--percent-limit 0.7 --stdio 2>/dev/null | grep -E '^ +[0-9]' >"$PERF"
	fi
	fleet_stop "${mp[@]}"
}

fleet_rounds r
fleet_table "$work/runs.jsonl" "$RECORDS" "$work/rows"
# Both stages: from the first record read until stage 2 holds every span
# (open or written), and the members' CPU until then.
python3 - "$work/runs.jsonl" "$RECORDS" <<'PY'
import collections, statistics, sys
sys.path.insert(0, "bench")
from fleet_runs import by_group
records = int(sys.argv[2])
rows = collections.defaultdict(list)
for n, ms in by_group(sys.argv[1]):
    if any(m["gathered_cpu_s"] is None for m in ms):
        continue
    rows[n].append((records / (ms[0]["gathered_s"] - ms[0]["first_s"]),
                    sum(m["gathered_cpu_s"] for m in ms) / records * 1e6))
print("| members | records/s, both stages (group) | CPU a record, us |")
print("|---|---|---|")
for n in sorted(rows):
    print(f"| {n} | {statistics.median(x[0] for x in rows[n]):,.0f} | "
          f"{statistics.median(x[1] for x in rows[n]):.1f} |")
PY
for n in $MEMBERS; do
	g="r$ROUNDS-m$n"
	echo "accuracy, $n members: $(python3 bench/fleet_score.py "$work/truth" "$work/$g".*.otlp)"
done

# What crossed Kafka more than once: the members' last counts, summed.
for n in $MEMBERS; do
	echo "sent again, $n members: $(python3 - "$work/r$ROUNDS-m$n".*.err <<'PY'
import collections, json, sys
keys = ("moves", "spans_routed", "spans_moved", "spans_forwarded", "spans_kept",
        "rebalances", "spans_handed_over", "ends_handed_over", "spans_repeated")
tot = collections.Counter()
for name in sys.argv[1:]:
    last = [l for l in open(name) if l.startswith("{")][-1]
    fleet = json.loads(last)["fleet"]
    tot.update({k: fleet.get(k, 0) for k in keys})
print(json.dumps({k: tot[k] for k in keys}))
PY
)"
done
echo "evicted (written early, past --max-spans): $(cat "$work"/*.err | grep '^{' |
	python3 -c 'import json, sys
print(max(json.loads(l)["evicted"] for l in sys.stdin))')"
[ -z "${FLEET_SVG:-}" ] || python3 bench/fleet_svg.py "$FLEET_SVG" $(cat "$work/rows")
