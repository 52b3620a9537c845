#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-topo --fleet's throughput on the topology records of a simulated
# fleet, through the loopback broker (build/tests/kafka_broker).
#
# NODES nodes run 14 services (node i runs service i mod 14, the call
# graph of bench/fleet_gen.c); every interval of INTERVALS, each node
# writes a server-side edge from each of CALLERS caller nodes (picked at
# random among the nodes of its calling services: a server knows its
# clients by address), and a client-side edge for each call to a service
# no kmond watches, as kmond writes them (docs/records.md, "topology"):
# about NODES x CALLERS x INTERVALS records, unkeyed as kmond's are
# (spread over PARTITIONS partitions). Then groups of 1, 2 and 4 members
# (MEMBERS) read all of it, each from the start: the wall time until the
# fleet's graph (what every member prints each --interval) counts every
# record, and the members' CPU (utime + stime from /proc); ROUNDS rounds,
# the groups alternating within a round. Each group's last graph must
# hold every record.
#   bench/topo_fleet.sh           (after make and make test's helpers)
# Environment: NODES (1000), CALLERS (20), INTERVALS (20), PARTITIONS
# (64), MEMBERS ("1 2 4"), ROUNDS (3), INTERVAL (kmon-topo's --interval,
# 0.5 s: the times are known to within one interval; each interval a
# member writes one delta, the edges it read since the last, and merges
# everyone's), FLEET_SVG (a file: the figure), CHECKPOINT (seconds: then
# one member reads everything writing a checkpoint that often, and
# leaves; the checkpoints' size, and how long a member that starts after
# it takes to print the whole graph from the last one), MEMBER_CPU
# (cores: each member capped at that much CPU, as bench/fleet.sh says).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NODES=${NODES:-1000}
CALLERS=${CALLERS:-20}
INTERVALS=${INTERVALS:-20}
PARTITIONS=${PARTITIONS:-64}
MEMBERS=${MEMBERS:-1 2 4}
ROUNDS=${ROUNDS:-3}
INTERVAL=${INTERVAL:-0.5}
make -s "$BUILD/kmon-topo" "$BUILD/tests/kafka_broker" >/dev/null

source bench/fleet_lib.sh
fleet_broker_start topo-bench
cmd "topic kmon.topology $PARTITIONS"
echo "load before: $(cat /proc/loadavg), $(nproc) cores"

python3 - "$NODES" "$CALLERS" "$INTERVALS" >"$work/records.tsv" <<'PY'
import json, random, sys
nodes, callers, intervals = (int(a) for a in sys.argv[1:4])
rnd = random.Random(7)
# bench/fleet_gen.c's application: who calls whom, and what
services = ["gateway", "frontend", "mobile-api", "catalog", "cart",
            "checkout", "users", "search", "recommend", "payments",
            "inventory", "pricing", "redis", "postgres"]
calls = {"gateway": ["frontend", "mobile-api"],
         "frontend": ["catalog", "cart", "users", "recommend"],
         "mobile-api": ["catalog", "users", "search"],
         "catalog": ["inventory", "pricing", "redis"],
         "cart": ["pricing", "redis"], "checkout": ["payments", "postgres"],
         "users": ["postgres", "redis"], "search": ["redis"],
         "recommend": ["catalog", "redis"], "payments": ["postgres"],
         "inventory": ["postgres"], "pricing": ["redis"]}
proto = {"redis": "redis", "postgres": "postgresql"}
addr = [f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(nodes)]
runs = {s: [i for i in range(nodes) if i % len(services) == k]
        for k, s in enumerate(services)}
callers_of = {s: [c for c in calls if s in calls[c]] for s in services}
out = sys.stdout
for t in range(intervals):
    ts = 1795900000000000000 + t * 1000000000
    for n in range(nodes):
        svc = services[n % len(services)]
        pool = [i for c in callers_of[svc] for i in runs[c]] or [None]
        for _ in range(callers):
            c = rnd.choice(pool)
            k = rnd.randint(1, 400)
            p50 = rnd.randint(50000, 3000000)
            rec = {"kind": "topology", "ts": ts, "node": f"node-{n:04d}",
                   "src": addr[c] if c is not None else "external",
                   "dst": svc, "side": "server", "dst_addr": addr[n],
                   "requests": k, "bytes": k * 700, "req_bytes": k * 150,
                   "resp_bytes": k * 550, "latency_p50_ns": p50,
                   "latency_p95_ns": p50 * 3, "latency_p99_ns": p50 * 7,
                   "protocol": proto.get(svc, "http"), "outcomes": k,
                   "errors": k // 50}
            if rec["protocol"] == "http":
                rec["status_2xx"] = k - k // 50
                rec["status_5xx"] = k // 50
            out.write(f"{rnd.getrandbits(32)}\t{json.dumps(rec, separators=(',', ':'))}\n")
        if svc == "payments":  # an API no kmond watches
            k = rnd.randint(1, 50)
            rec = {"kind": "topology", "ts": ts, "node": f"node-{n:04d}",
                   "src": svc, "src_addr": addr[n], "dst": "203.0.113.9",
                   "side": "client", "requests": k, "bytes": k * 900,
                   "latency_p50_ns": 9000000, "latency_p95_ns": 20000000,
                   "latency_p99_ns": 40000000, "protocol": "http",
                   "outcomes": k, "errors": 0, "status_2xx": k}
            out.write(f"{rnd.getrandbits(32)}\t{json.dumps(rec, separators=(',', ':'))}\n")
PY
RECORDS=$(wc -l <"$work/records.tsv")
kcat -P -l -b "$brokers" -t kmon.topology -K $'\t' -X linger.ms=50 \
	-X queue.buffering.max.messages=1000000 "$work/records.tsv"
got=$(kcat -C -b "$brokers" -t kmon.topology -o beginning -e -q -f '.\n' | wc -l)
[ "$got" = "$RECORDS" ] || { echo "kmon.topology holds $got of $RECORDS records" >&2; exit 1; }
echo "$RECORDS records in kmon.topology ($(($(wc -c <"$work/records.tsv") / RECORDS)) bytes each)"

# run GROUP N: N members read everything; prints one JSON line per member
run() {
	local g=$1 n=$2 i t0
	cmd "topic kmon.$g.topology_partial $PARTITIONS"
	local mp=()
	for ((i = 0; i < n; i++)); do
		fleet_member "$g.$i" "$BUILD/kmon-topo" -b "$brokers" -g "$g" --fleet --interval "$INTERVAL" \
			-X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
			-j "$work/$g.$i.json" 2>"$work/$g.$i.err" &
		mp+=($!)
		pids+=($!)
	done
	t0=$(date +%s.%N)
	python3 - "$work" "$g" "$n" "$RECORDS" "$t0" "${mp[@]}" <<'PY'
import json, os, sys, time
work, g, n, records, t0 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
pids = sys.argv[6:]
tick = os.sysconf("SC_CLK_TCK")
def graphed(i):
    # the fleet's graph as member i last printed it: records counted
    try:
        with open(f"{work}/{g}.{i}.json", "rb") as f:
            f.seek(max(0, os.path.getsize(f.name) - 65536))
            lines = f.read().split(b"\n")
        for l in reversed(lines):
            if l.startswith(b"{"):
                return json.loads(l).get("records", 0)
    except (OSError, ValueError):
        pass
    return 0
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM"):
            return int(l.split()[1]) / 1024
first = done = None
while time.time() - t0 < 300:
    got = max(graphed(i) for i in range(n))
    if first is None and got:
        first = time.time() - t0  # the group formed: graphs begin
    if got >= records:
        done = time.time() - t0
        cpus = [cpu(p) for p in pids]
        break
    time.sleep(0.1)
if done is None:
    sys.exit(f"{g}: the graph counts {got} of {records} records in 300 s")
for i, p in enumerate(pids):
    print(json.dumps({"group": g, "members": n, "member": i,
                      "first_s": round(first, 2), "read_s": round(done, 2),
                      "cpu_s": cpus[i], "rss_mib": round(hwm(p), 1)}))
PY
	fleet_stop "${mp[@]}"
}

fleet_rounds t

# records_in FILE: the records the last graph in FILE counts
records_in() {
	tail -1 "$1" 2>/dev/null | python3 -c 'import json, sys
print(json.load(sys.stdin)["records"])' 2>/dev/null || echo 0
}
# ck_member N ARGS...: member N of group ck, until its graph counts every
# record (300 s at most); its pid in ck_pid
ck_member() {
	local n=$1 i
	shift
	"$BUILD/kmon-topo" -b "$brokers" -g ck --fleet --interval "$INTERVAL" \
		-X session.timeout.ms=6000 -X heartbeat.interval.ms=500 "$@" \
		-j "$work/ck.$n.json" 2>"$work/ck.$n.err" &
	ck_pid=$!
	pids+=($ck_pid)
	for ((i = 0; i < 3000; i++)); do
		[ "$(records_in "$work/ck.$n.json")" -ge "$RECORDS" ] && return 0
		sleep 0.1
	done
	echo "ck member $n: its graph counts $(records_in "$work/ck.$n.json") of $RECORDS" >&2
	return 1
}
if [ -n "${CHECKPOINT:-}" ]; then
	cmd "topic kmon.ck.topology_partial $PARTITIONS"
	cmd "topic kmon.ck.topology_checkpoint 1"
	ck_member 0 --checkpoint "$CHECKPOINT"
	sleep "$((2 * ${CHECKPOINT%.*} + 1))" # a checkpoint after the last delta
	fleet_stop "$ck_pid"
	kcat -C -b "$brokers" -t kmon.ck.topology_checkpoint -o beginning -e -q \
		-f '%S\n' >"$work/ck.sizes"
	t0=$(date +%s.%N)
	ck_member 1 --checkpoint 0
	t1=$(date +%s.%N)
	fleet_stop "$ck_pid"
	grep -h 'fleet:\|checkpoint' "$work"/ck.*.err
	python3 - "$work/ck.sizes" "$t0" "$t1" "$work/ck.0.err" <<'PY'
import re, sys
sizes = [int(l) for l in open(sys.argv[1]) if l.strip()]
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
n = int(re.search(r"(\d+) checkpoints written", open(sys.argv[4]).read())[1])
print(f"checkpoints: {n} written, {len(sizes)} messages, "
      f"{sum(sizes) / n / 1e6:.2f} MB each; a member that starts after "
      f"them printed the whole graph {t1 - t0:.2f} s after its start")
PY
fi
# The graph is printed every --interval: the time to read everything,
# from the first graph with any record (the group formed and read for up
# to one interval) to the first with all of them (read up to one
# interval before), is right on average, within INTERVAL each time.
fleet_table "$work/runs.jsonl" "$RECORDS" "$work/rows"
[ -z "${FLEET_SVG:-}" ] || python3 bench/fleet_svg.py "$FLEET_SVG" \
	--title "kmon-topo --fleet: topology records/s against members" $(cat "$work/rows")
