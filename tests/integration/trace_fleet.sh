#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace --fleet: members of one group, each on its own partitions,
# write the same traces as one member does, while members join and
# leave. Three nodes' tcp records (tests/lib/trace_gen.py) go to kmon.tcp
# (6 partitions) keyed by req_seq as kmond keys them, in three parts:
# group g2 has one member for the first part, two from the second; group
# g3 has two, a third joins before the second part and one leaves before
# the third (each change a rebalance in the middle of the stream, with
# ends and traces open). The traces of every member of a group together
# are exactly the expected ones (trace_check.py) and exactly one
# member's (trace_same.py: the same trace ids, spans and parents), each
# span written once.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/fleet_groups.sh"
source "$(dirname "$0")/../lib/otlp.sh"

SEED=${SEED:-$RANDOM}
echo "seed $SEED"
trace_gen "$WORK/fleet" --requests 120 --seed "$SEED"
SAME="python3 $(dirname "$0")/../lib/trace_same.py"
FAST_GROUP="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"
SCALE=${TEST_TIME_SCALE:-1}
QUIET=$((5 * SCALE))

# The records of the three nodes by time, in three parts, key = req_seq.
python3 - "$WORK/fleet" <<'PY2'
import json, sys
d = sys.argv[1]
recs = [json.loads(l) for n in (1, 2, 3) for l in open(f"{d}/node-{n}.json")]
recs.sort(key=lambda r: r["ts"])
third = len(recs) // 3
for i, part in enumerate((recs[:third], recs[third:2 * third], recs[2 * third:])):
    with open(f"{d}/part-{i + 1}.tsv", "w") as out:
        for r in part:
            out.write(f'{r["req_seq"]}\t{json.dumps(r)}\n')
PY2
RECORDS_ALL=$(cat "$WORK"/fleet/part-*.tsv | wc -l)

# Each group reads its own kmond topic: PREFIX = g1. g2. g3.
start_broker -p 0
for g in g1 g2 g3; do
	broker_cmd "topic $g.tcp 6"
	broker_cmd "topic $g.$g.exchange 6"
	broker_cmd "topic $g.$g.span 6"
done
publish() { # GROUP PART
	kcat -P -b "$BROKERS" -t "$1.tcp" -K $'\t' <"$WORK/fleet/part-$2.tsv" ||
		fail "kcat could not publish part $2 for $1"
}
declare -A member_pid
member() { # GROUP NAME: its traces in $WORK/NAME.otlp
	"$KMON_TRACE" -b "$BROKERS" -p "$1." -g "$1" --fleet $FAST_GROUP \
		--quiet $QUIET --late $((20 * SCALE)) --stats 1 \
		-o "$WORK/$2.otlp" 2>"$WORK/$2.err" &
	STARTED_PIDS+=($!)
	member_pid[$2]=$!
}
stop() { # NAME: leaves its group, handing over what it holds
	kill -TERM "${member_pid[$1]}"
	wait "${member_pid[$1]}"
	expect_eq "$1: exit code" $? 0
}
spans_of() {
	cat "$@" 2>/dev/null | python3 -c 'import json, sys
print(sum(len(ss["spans"]) for l in sys.stdin
          for rs in json.loads(l)["resourceSpans"] for ss in rs["scopeSpans"]))'
}
wait_written() { # NAME...: every record written as a span, then quiet
	local i files=()
	for n in "$@"; do files+=("$WORK/$n.otlp"); done
	for ((i = 0; i < 600 * SCALE; i++)); do
		[ "$(spans_of "${files[@]}")" -ge "$RECORDS_ALL" ] && break
		sleep 0.1
	done
	sleep $((QUIET + 1))
}
# how many times NAME's stage COUNT (a "fleet" count) moved
fleet_count() {
	tail -1 "$WORK/$1.err" | python3 -c 'import json, sys
print(json.load(sys.stdin)["fleet"][sys.argv[1]])' "$2"
}
settle() { sleep $((3 * SCALE)); } # a rebalance: join, sync, assign

# The three groups read side by side (each mostly waits: rebalances, the
# quiet window), then are compared.
one_member() { # the reference
	member g1 one
	for part in 1 2 3; do publish g1 $part; done
	wait_written one
	stop one
	trace_check "$WORK/one.otlp" "$WORK/fleet/expected.json"
}
two_members() { # the second joining while the first holds open traces
	group_joined g2 a b wait_written a b
	cat "$WORK/a.otlp" "$WORK/b.otlp" >"$WORK/g2.otlp"
	trace_check "$WORK/g2.otlp" "$WORK/fleet/expected.json"
}
three_members() { # a third joins, then one of them leaves
	group_joined_left g3 c d e wait_written c d e
	trace_check <(cat "$WORK/c.otlp" "$WORK/d.otlp" "$WORK/e.otlp") "$WORK/fleet/expected.json"
}
side_by_side one_member two_members three_members

n=$($SAME "$WORK/one.otlp" "$WORK/a.otlp" "$WORK/b.otlp") || fail "g2 and one member differ"
[ -s "$WORK/b.otlp" ] || fail "the second member wrote nothing: it got no partition"
handed=$(($(fleet_count a spans_handed_over) + $(fleet_count a ends_handed_over)))
[ "$handed" -gt 0 ] || fail "a handed nothing over: the rebalance found nothing open"
echo "ok: two members, $n spans as one member's ($handed spans and ends handed over)"
n=$($SAME "$WORK/one.otlp" "$WORK/c.otlp" "$WORK/d.otlp" "$WORK/e.otlp") ||
	fail "g3 and one member differ"
echo "ok: three members, one leaving, $n spans as one member's"
