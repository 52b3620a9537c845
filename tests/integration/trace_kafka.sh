#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace as a Kafka consumer: three nodes publish the tcp records
# they would write (tests/lib/trace_gen.py) to kmon.tcp (3 partitions,
# keyed by service as kmond keys them, so one trace's spans arrive on
# several partitions in any order); kmon-trace, one member of a consumer
# group, writes exactly the expected traces, each whole and once, as
# OTLP JSON that OpenTelemetry's definitions accept, and to a collector
# over OTLP/HTTP at the same time. The same group started again reads
# nothing twice.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/otlp.sh"

otlp_setup
SEED=${SEED:-$RANDOM}
echo "seed $SEED"
trace_gen "$WORK/fleet" --requests 40 --seed "$SEED"
TRACES=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traces"]))' \
	"$WORK/fleet/expected.json")
FAST_GROUP="-X session.timeout.ms=6000 -X heartbeat.interval.ms=1000"

# publish NODE: NODE's records, key = service, headers as kmond's.
publish() {
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["service"] + "\t" + line.rstrip("\n"))' \
		"$WORK/fleet/$1.json" |
		kcat -P -b "$BROKERS" -t kmon.tcp -K $'\t' -H kind=tcp -H "node=$1" ||
		fail "$1: kcat could not publish"
}

python3 "$OTLP_LIB/otlp_receiver.py" "$WORK/rx.port" "$WORK/rx.log" 2>"$WORK/rx.err" &
STARTED_PIDS+=($!)
for ((i = 0; i < 50; i++)); do [ -s "$WORK/rx.port" ] && break; sleep 0.1; done
[ -s "$WORK/rx.port" ] || fail "receiver did not start"

start_broker -p 0
broker_cmd "topic kmon.tcp 3"
# --quiet 3: longer than the spread between a call's record and its
# server's across partitions and nodes (a server end written before its
# call came cannot join it: docs/consumers.md), with room for a slow (ASan) build;
# times TEST_TIME_SCALE (a qemu guest takes seconds to start each kcat).
QUIET=$((3 * ${TEST_TIME_SCALE:-1}))
"$KMON_TRACE" -b "$BROKERS" -g trace-test-$$ $FAST_GROUP --quiet $QUIET --stats 0.5 \
	-o "$WORK/out.otlp" -u "http://127.0.0.1:$(cat "$WORK/rx.port")" \
	2>"$WORK/kt.err" &
kt=$!
STARTED_PIDS+=($kt)
# the server ends first, then their callers: the join waits for them
publish node-3
publish node-2
sleep 0.5
publish node-1
for ((i = 0; i < 400; i++)); do
	[ "$(wc -l <"$WORK/out.otlp" 2>/dev/null || echo 0)" -ge "$TRACES" ] && break
	sleep 0.1
done
sleep "$QUIET.5" # nothing more may come: no trace in pieces
kill -TERM $kt
wait $kt
expect_eq "kmon-trace exit code after SIGTERM" $? 0
grep -q "reading kmon.tcp from $BROKERS as group trace-test-$$" "$WORK/kt.err" ||
	fail "no start-up line: $(cat "$WORK/kt.err")"
trace_check "$WORK/out.otlp" "$WORK/fleet/expected.json" --stats "$WORK/kt.err"
# --stats 0.5: the counts while running too; at the end nothing is open
python3 - "$WORK/kt.err" <<'PY' || fail "--stats: $(cat "$WORK/kt.err")"
import json, sys
stats = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(stats) >= 4, f"{len(stats)} stats lines"
assert any(s["open_spans"] > 0 for s in stats[:-1]), "never saw open spans"
assert stats[-1]["open_traces"] == 0 and stats[-1]["open_spans"] == 0
print(f"ok: {len(stats)} stats lines, open spans seen, none open at exit")
PY
otlp_check "$WORK/out.otlp"
# what the collector got: the same traces, in one or more POSTs
python3 - "$WORK/rx.log" "$WORK/rx.otlp" <<'PY' || fail "POSTs"
import json, sys
traces = {}
for r in map(json.loads, open(sys.argv[1])):
    assert r["status"] == 200 and r["path"] == "/v1/traces"
    for rs in json.loads(r["body"])["resourceSpans"]:
        traces.setdefault(rs["scopeSpans"][0]["spans"][0]["traceId"], []).append(rs)
with open(sys.argv[2], "w") as out:
    for rss in traces.values():
        out.write(json.dumps({"resourceSpans": rss}) + "\n")
PY
trace_check "$WORK/rx.otlp" "$WORK/fleet/expected.json"

# The same group again: everything was committed, nothing is re-read.
"$KMON_TRACE" -b "$BROKERS" -g trace-test-$$ $FAST_GROUP --duration 8 \
	-o "$WORK/again.otlp" 2>"$WORK/again.err" || fail "kmon-trace --duration: $(cat "$WORK/again.err")"
expect_eq "records re-read by the same group" \
	"$(tail -1 "$WORK/again.err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')" 0
