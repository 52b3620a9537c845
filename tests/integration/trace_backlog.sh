#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace reading a backlog slower than the stream went by keeps each
# trace whole: --quiet runs on the stream's own time while the reader is
# behind (consumers/common/reader_clock.h), not on the wall clock, which
# would write a trace before its late spans are read. Three nodes' tcp
# records of 4000 front requests begun microseconds apart (milliseconds
# of the records' time; tests/lib/trace_gen.py), node-3's last (its
# kmond lagging), are read from the start by readers capped at a few
# hundredths of a core (tests/lib/cpu_cap.sh), so that reading them
# takes seconds, several times --quiet 1s: a plain member of a group and
# a --fleet member of another, side by side. Every trace is the expected
# one, whole (trace_check.py), and the reading took at least 2 s (else
# the test would tell nothing). The clock's moves (by the stream while
# behind, by the wall clock after) are unit/reader_clock's.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/otlp.sh"
source "$(dirname "$0")/../lib/cpu_cap.sh"

cpu_cap_ready || skip "no cgroup cpu controller to cap a reader with"
trap 'cleanup; cpu_cap_gone' EXIT
SEED=${SEED:-$RANDOM}
echo "seed $SEED"
trace_gen "$WORK/gen" --requests 4000 --gap-us 1 --seed "$SEED"
FAST_GROUP="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"
# the readers' shares of a core: 2000 requests' records at these were
# read in 1 to 2 s on a machine of 2026-12-02 (too fast to tell, by
# $SECONDS' whole seconds); 4000 in 3 to 4 s (plain) and 5 to 8 s (fleet)
CAP_PLAIN=${CAP_PLAIN:-0.02}
CAP_FLEET=${CAP_FLEET:-0.03}

# nodes 1 and 2 by time, then node 3; key = req_seq, as kmond keys them
python3 - "$WORK/gen" >"$WORK/stream.tsv" <<'PY'
import json, sys
d = sys.argv[1]
recs = [json.loads(l) for n in (1, 2) for l in open(f"{d}/node-{n}.json")]
recs.sort(key=lambda r: r["ts"])
recs += [json.loads(l) for l in open(f"{d}/node-3.json")]
for r in recs:
    print(f'{r["req_seq"]}\t{json.dumps(r)}')
PY
RECORDS=$(wc -l <"$WORK/stream.tsv")

start_broker -p 0
for t in plain.tcp fleet.tcp fleet.fleet.exchange fleet.fleet.span; do
	broker_cmd "topic $t 4"
done
for p in plain fleet; do
	kcat -P -b "$BROKERS" -t $p.tcp -K $'\t' <"$WORK/stream.tsv" ||
		fail "kcat could not publish to $p.tcp"
done

# "RECORDS SPANS_WRITTEN" of reader NAME, as its last trace_stats line says
counts() {
	grep '^{' "$WORK/$1.err" 2>/dev/null | tail -1 |
		python3 -c 'import json, sys; s = json.load(sys.stdin)
print(s["records"], s["spans_written"])' 2>/dev/null || echo 0 0
}

# read NAME CAP ARGS...: a reader capped at CAP reads everything; its
# traces are the expected ones and it read for more than 2 s
read_all() {
	local name=$1 cap=$2 i n written first= all=
	shift 2
	cpu_capped "$name" "$cap" "$KMON_TRACE" -b "$BROKERS" -g "$name" $FAST_GROUP \
		--quiet 1 --late 30 --stats 0.1 -o "$WORK/$name.otlp" "$@" \
		2>"$WORK/$name.err" &
	STARTED_PIDS+=($!)
	for ((i = 0; i < 600; i++)); do
		read -r n written < <(counts "$name")
		[ -z "$first" ] && [ "$n" -gt 0 ] && first=$SECONDS
		[ -z "$all" ] && [ "$n" -ge "$RECORDS" ] && all=$SECONDS
		[ "$written" -ge "$RECORDS" ] && break
		sleep 0.2
	done
	[ -n "$all" ] || fail "$name read $n of $RECORDS records"
	echo "$name: read $RECORDS records in about $((all - first)) s"
	[ $((all - first)) -ge 2 ] ||
		fail "$name read everything within $((all - first)) s: too fast to tell (a lower CAP)"
	trace_check "$WORK/$name.otlp" "$WORK/gen/expected.json"
}
plain_reader() { read_all plain "$CAP_PLAIN" -p plain.; }
fleet_reader() { read_all fleet "$CAP_FLEET" -p fleet. --fleet; }
side_by_side plain_reader fleet_reader
