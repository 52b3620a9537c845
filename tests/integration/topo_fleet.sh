#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-topo --fleet: members of one group, each on its own partitions of
# kmon.topology, print together the graph one member prints, while
# members join and leave.
#
# Six nodes' topology records (a call graph of 8 services, both sides,
# addresses one service claims and one two services claim, outcomes,
# latencies spread over three decades) go to PREFIX.topology (6
# partitions) under random keys, as kmond's unkeyed topology records
# are spread, in three parts: group g2 has one member for the first
# part, two from the second; group g3 has two, a third joins before the
# second part and one leaves before the third (each change a rebalance
# in the middle of the stream). The last graph of the member that
# leaves last is one kmon-topo's (without --fleet) graph exactly: the same edges, counts,
# nodes and percentiles (histograms merged bucket by bucket lose
# nothing), and no offset was read twice. Group g4's first member writes
# checkpoints and leaves; the next one starts from its last checkpoint,
# merges only the deltas after it, and prints that graph too.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/fleet_groups.sh"

KMON_TOPO=$BUILD/kmon-topo
SEED=${SEED:-$RANDOM}
echo "seed $SEED"
FAST_GROUP="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"
SCALE=${TEST_TIME_SCALE:-1}

python3 - "$WORK" "$SEED" <<'PY'
import json, random, sys
work, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
calls = [("web", "api"), ("web", "auth"), ("api", "cart"), ("api", "search"),
         ("cart", "db"), ("search", "index"), ("api", "auth"),
         ("auth", "db"), ("cart", "cache")]
addr = {s: f"10.1.0.{i + 1}:80" for i, s in
        enumerate(["web", "api", "auth", "cart", "search", "db", "index",
                   "cache"])}
home = {s: f"node-{i % 6 + 1}" for i, s in enumerate(addr)}
recs = []
for i in range(40):
    ts = 1795000000000000000 + i * 1000000000
    for src, dst in calls:
        n = rnd.randint(1, 500)
        p50 = rnd.randint(20000, 2000000)
        common = {"ts": ts, "requests": n, "bytes": n * rnd.randint(50, 900),
                  "latency_p50_ns": p50, "latency_p95_ns": p50 * 3,
                  "latency_p99_ns": p50 * 7, "protocol": "http",
                  "outcomes": n, "errors": n // 20,
                  "status_2xx": n - n // 20, "status_5xx": n // 20}
        # the server knows its client by address; db's address is also
        # claimed by cache on one node (ambiguous: stays an address)
        recs.append(dict(common, kind="topology", node=home[dst],
                         src=addr[src].split(":")[0], dst=dst,
                         dst_addr=addr[dst]))
        if i % 3 == 0:
            c = dict(common, kind="topology", node=home[src], side="client",
                     src=src, src_addr=addr[src].split(":")[0],
                     dst=addr[dst], requests=max(0, n + rnd.randint(-3, 3)))
            recs.append(c)
    recs.append({"kind": "topology", "ts": ts, "node": "node-9",
                 "src": "batch", "dst": "cache", "dst_addr": addr["db"],
                 "requests": 1, "bytes": 10})
# one server address per client, seen by the client's node
for s, a in addr.items():
    recs.append({"kind": "topology", "ts": 1795000000000000000,
                 "node": home[s], "src": s, "src_addr": a.split(":")[0],
                 "dst": "health", "requests": 1, "bytes": 1})
third = len(recs) // 3
for k, part in enumerate((recs[:third], recs[third:2 * third],
                          recs[2 * third:])):
    with open(f"{work}/part-{k + 1}.tsv", "w") as out:
        for r in part:
            out.write(f'{rnd.getrandbits(32)}\t{json.dumps(r)}\n')
PY
RECORDS_ALL=$(cat "$WORK"/part-*.tsv | wc -l)

start_broker -p 0
for g in g1 g2 g3 g4; do
	broker_cmd "topic $g.topology 6"
	broker_cmd "topic $g.$g.topology_partial 2"
done
broker_cmd "topic g4.g4.topology_checkpoint 1"
publish() { # GROUP PART
	kcat -P -b "$BROKERS" -t "$1.topology" -K $'\t' <"$WORK/part-$2.tsv" ||
		fail "kcat could not publish part $2 for $1"
}
declare -A member_pid
member() { # GROUP NAME [--fleet]: its graphs in $WORK/NAME.json
	"$KMON_TOPO" -b "$BROKERS" -p "$1." -g "$1" ${3:---fleet} $FAST_GROUP \
		--interval 1 --json "$WORK/$2.json" 2>"$WORK/$2.err" &
	STARTED_PIDS+=($!)
	member_pid[$2]=$!
}
stop() { # NAME: leaves its group, handing over what it read
	kill -TERM "${member_pid[$1]}"
	wait "${member_pid[$1]}"
	expect_eq "$1: exit code" $? 0
}
records_of() { # NAME: records in its last graph
	tail -1 "$WORK/$1.json" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["records"])' 2>/dev/null ||
		echo 0
}
wait_read() { # NAME [N]: its graph holds every record (N of them)
	local i want=${2:-$RECORDS_ALL}
	for ((i = 0; i < 300 * SCALE; i++)); do
		[ "$(records_of "$1")" -eq "$want" ] && return 0
		sleep 0.1
	done
	fail "$1: $(records_of "$1") of $want records in its graph"
}
fleet_line() { grep 'fleet:' "$WORK/$1.err" | tail -1; }
# same_graph ONE OTHER: the last graphs, but for when and where
same_graph() {
	python3 - "$WORK/$1.json" "$WORK/$2.json" <<'PY'
import json, sys
a, b = (json.loads(open(f).read().splitlines()[-1]) for f in sys.argv[1:])
for g in (a, b):
    del g["ts"], g["node"]
if a != b:
    ea = {(e["src"], e["dst"]): e for e in a["edges"]}
    eb = {(e["src"], e["dst"]): e for e in b["edges"]}
    for k in sorted(set(ea) | set(eb)):
        if ea.get(k) != eb.get(k):
            print(k, ea.get(k), eb.get(k), file=sys.stderr)
    sys.exit(1)
print(len(a["edges"]), "edges,", a["records"], "records")
PY
}
settle() { sleep $((3 * SCALE)); } # a rebalance: join, sync, assign

# The four groups read side by side (each mostly waits: rebalances,
# intervals), then their graphs are compared.
one_member() { # kmon-topo as it was, alone: the reference
	member g1 one --interval=1
	for part in 1 2 3; do publish g1 $part; done
	wait_read one
	stop one
}
two_members() { # the second joining mid-stream
	group_joined g2 a b wait_read b
}
three_members() { # a third joins, then one of them leaves
	group_joined_left g3 c d e wait_read e
}
# Checkpoints: f reads the first two parts alone, writing a checkpoint
# every second, and leaves; g starts after it and reads the third part.
# g begins from f's last checkpoint: it merges fewer deltas than f wrote
# (only those after the checkpoint), and its graph is one member's; a
# checkpoint cut short after it is passed over.
from_checkpoint() {
	member g4 f "--fleet --checkpoint 1"
	publish g4 1
	wait_read f "$(wc -l <"$WORK/part-1.tsv")"
	publish g4 2
	wait_read f "$(cat "$WORK"/part-[12].tsv | wc -l)"
	sleep $((3 * SCALE)) # a checkpoint after the last delta
	stop f
	# a checkpoint whose writer died after its first message: not whole,
	# so not loaded (999 records more would show it)
	echo '{"kind":"topology_checkpoint","ts":1,"node":"x","id":"cut.1","part":0,"records":999,"rejected":0,"nodes":[],"aliases":[],"edges":[]}' |
		kcat -P -b "$BROKERS" -t g4.g4.topology_checkpoint -p 0 ||
		fail "kcat could not write a checkpoint's first part"
	member g4 g "--fleet --checkpoint 0"
	publish g4 3
	wait_read g
	stop g
}
side_by_side one_member two_members three_members from_checkpoint

edges=$(python3 -c 'import json, sys
print(len(json.loads(open(sys.argv[1]).read().splitlines()[-1])["edges"]))' "$WORK/one.json")
[ "$edges" -ge 10 ] || fail "one member's graph has $edges edges"
grep -q '"dst":"10.1.0.6:80"' "$WORK/one.json" ||
	fail "the address two services claim was resolved"

n=$(same_graph one b) || fail "g2's graph and one member's differ"
fleet_line b | grep -q ' 0 offsets read twice' || fail "b: $(fleet_line b)"
fleet_line b | grep -vq ' 0 partials written' || fail "b wrote no partial: it got no partition"
echo "ok: two members, $n as one member's ($(fleet_line a))"

n=$(same_graph one e) || fail "g3's graph and one member's differ"
fleet_line e | grep -q ' 0 offsets read twice' || fail "e: $(fleet_line e)"
# c read before the others joined, e after its settle; d joined with c
# and may find its partitions read already where the join's rebalance
# came late (a loaded machine, once in CI): a delta only holds what its
# member read
for m in c e; do
	fleet_line $m | grep -vq ' 0 partials written' || fail "$m wrote no partial"
done
echo "ok: three members, one leaving, $n as one member's"

n=$(same_graph one g) || fail "g4's graph (from a checkpoint) and one member's differ"
fleet_line f | grep -vq ' 0 checkpoints written' || fail "f: $(fleet_line f)"
fleet_line g | grep -q ' 1 loaded' || fail "g loaded no checkpoint: $(fleet_line g)"
fleet_line g | grep -q ' 0 offsets read twice' || fail "g: $(fleet_line g)"
written() { fleet_line "$1" | sed -n 's/.* \([0-9]*\) partials written.*/\1/p'; }
merged() { fleet_line "$1" | sed -n 's/.*written, \([0-9]*\) read.*/\1/p'; }
of_f=$(($(merged g) - $(written g))) # the deltas g merged that it did not write
[ "$of_f" -lt "$(written f)" ] ||
	fail "g merged $of_f of f's $(written f) deltas: the checkpoint saved none"
echo "ok: a member from a checkpoint, $n as one member's (f wrote $(written f) deltas, g merged $of_f of them)"
