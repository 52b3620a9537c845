#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace on files: the tcp records three nodes would write (made by
# tests/lib/trace_gen.py: cross-node calls, some through destination
# NAT, parallel fan-out, calls to a database no kmond watches) become
# exactly the expected traces, whatever order the nodes' records come
# in; every line is an ExportTraceServiceRequest that OpenTelemetry's own
# definitions accept; quiet traces are written while input still flows;
# the bounds write traces early without losing a span; bad records are
# refused with the reason and counted.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/otlp.sh"

otlp_setup
SEED=${SEED:-$RANDOM}
echo "seed $SEED"
trace_gen "$WORK/fleet" --requests 40 --seed "$SEED"
F=$WORK/fleet

# The CLI: usage errors exit 2.
"$KMON_TRACE" >/dev/null 2>&1
expect_eq "kmon-trace without -i or -b" $? 2
"$KMON_TRACE" -i - -b 127.0.0.1:1 >/dev/null 2>&1 </dev/null
expect_eq "kmon-trace with -i and -b" $? 2
"$KMON_TRACE" -i - --quiet 0 >/dev/null 2>&1 </dev/null
expect_eq "kmon-trace --quiet 0" $? 2
out=$("$KMON_TRACE" -i "$WORK/none.json" 2>&1)
expect_eq "kmon-trace on a missing file" "$? $out" "2 kmon-trace: $WORK/none.json: No such file or directory"

# One node after the other, the server ends (node-2, node-3) first.
cat "$F/node-2.json" "$F/node-3.json" "$F/node-1.json" |
	"$KMON_TRACE" -i - >"$WORK/a.otlp" 2>"$WORK/a.err" ||
	fail "kmon-trace -i -: $(cat "$WORK/a.err")"
trace_check "$WORK/a.otlp" "$F/expected.json" --stats "$WORK/a.err"
otlp_check "$WORK/a.otlp"

# All nodes interleaved by time, as a Kafka consumer sees them, from a
# file, with records of other kinds in between (skipped). A regular file
# is written at its end whatever --quiet says: no trace in pieces even
# at 1 us (the file is read in several chunks).
python3 - "$F" >"$WORK/all.json" <<'PY'
import json, sys
recs = []
for n in ("node-1", "node-2", "node-3"):
    recs += [json.loads(l) for l in open(f"{sys.argv[1]}/{n}.json")]
recs.sort(key=lambda r: r["ts"])
for i, r in enumerate(recs):
    print(json.dumps(r))
    if i % 10 == 0:
        print(json.dumps({"kind": "stats", "ts": r["ts"], "node": r["node"]}))
PY
[ "$(stat -c %s "$WORK/all.json")" -gt 65536 ] || fail "all.json fits one read"
"$KMON_TRACE" -i "$WORK/all.json" --quiet 0.000001 -o "$WORK/b.otlp" 2>"$WORK/b.err" ||
	fail "kmon-trace -i FILE: $(cat "$WORK/b.err")"
trace_check "$WORK/b.otlp" "$F/expected.json"
otlp_check "$WORK/b.otlp"
skipped=$(tail -1 "$WORK/b.err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["skipped"])')
[ "$skipped" -gt 0 ] || fail "other kinds were not skipped: $(tail -1 "$WORK/b.err")"

# The validator itself refuses what a collector would.
node "$OTLP_LIB/otlp_check.js" "$OTLP_MODULES" --selftest "$WORK/a.otlp" ||
	fail "otlp_check.js accepts OTLP a collector refuses"

# A stream: a second fleet arrives 2 s after the first; with --quiet
# 0.5 the first fleet's traces are written before the second arrives.
trace_gen "$WORK/fleet2" --requests 12 --seed $((SEED + 1))
mkfifo "$WORK/pipe"
"$KMON_TRACE" -i "$WORK/pipe" --quiet 0.5 -o "$WORK/c.otlp" 2>"$WORK/c.err" &
kt=$!
STARTED_PIDS+=($kt)
exec 8>"$WORK/pipe"
cat "$F"/node-*.json >&8
sleep 2
lines_before=$(wc -l <"$WORK/c.otlp")
cat "$WORK/fleet2"/node-*.json >&8
exec 8>&-
wait $kt || fail "kmon-trace on a pipe: $(cat "$WORK/c.err")"
want_before=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traces"]))' "$F/expected.json")
expect_eq "traces written while the pipe was quiet" "$lines_before" "$want_before"
head -n "$want_before" "$WORK/c.otlp" >"$WORK/c1.otlp"
tail -n +"$((want_before + 1))" "$WORK/c.otlp" >"$WORK/c2.otlp"
trace_check "$WORK/c1.otlp" "$F/expected.json"
trace_check "$WORK/c2.otlp" "$WORK/fleet2/expected.json"

# Late server ends: node-1's calls come 2 s before the servers that
# answered them (node-2, node-3), their traces written long before; with
# the default --late 60 every server end still joins its call, under the
# call's trace id: the pieces make exactly the expected traces.
mkfifo "$WORK/pipe2"
"$KMON_TRACE" -i "$WORK/pipe2" --quiet 0.5 -o "$WORK/g.otlp" 2>"$WORK/g.err" &
kt=$!
STARTED_PIDS+=($kt)
exec 8>"$WORK/pipe2"
cat "$F/node-1.json" >&8
sleep 2
cat "$F/node-2.json" "$F/node-3.json" >&8
exec 8>&-
wait $kt || fail "kmon-trace on a pipe: $(cat "$WORK/g.err")"
trace_check "$WORK/g.otlp" "$F/expected.json" --stats "$WORK/g.err" --pieces
otlp_check "$WORK/g.otlp"
late=$(tail -1 "$WORK/g.err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["late_joined"])')
[ "$late" -gt 0 ] || fail "no late join: $(tail -1 "$WORK/g.err")"
echo "ok: $late server ends joined their calls after these were written"

# Late calls: node-1's calls come 2 s after the servers that answered
# them, once kmon-trace knows node-1's address (from an earlier fleet):
# the servers' traces are held past --quiet 0.5 for their callers, and
# every trace is written whole, once.
mkfifo "$WORK/pipe3"
"$KMON_TRACE" -i "$WORK/pipe3" --quiet 0.5 -o "$WORK/h.otlp" 2>"$WORK/h.err" &
kt=$!
STARTED_PIDS+=($kt)
exec 8>"$WORK/pipe3"
cat "$WORK/fleet2"/node-*.json >&8
sleep 1
cat "$F/node-2.json" "$F/node-3.json" >&8
sleep 2
cat "$F/node-1.json" >&8
exec 8>&-
wait $kt || fail "kmon-trace on a pipe: $(cat "$WORK/h.err")"
python3 - "$WORK/h.otlp" "$WORK/fleet2/expected.json" "$WORK/h1.otlp" "$WORK/h2.otlp" <<'PY'
import json, sys
first = set(json.load(open(sys.argv[2]))["spans"])
with open(sys.argv[3], "w") as a, open(sys.argv[4], "w") as b:
    for line in open(sys.argv[1]):
        sid = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"]
        (a if sid in first else b).write(line)
PY
trace_check "$WORK/h1.otlp" "$WORK/fleet2/expected.json"
trace_check "$WORK/h2.otlp" "$F/expected.json"
held=$(tail -1 "$WORK/h.err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["held"])')
[ "$held" -gt 0 ] || fail "no trace held: $(tail -1 "$WORK/h.err")"
echo "ok: $held server traces held for their late callers, all whole"

# Bounds: 4 open traces at most; the oldest are written early (their
# late spans then make traces of their own), no span is lost.
"$KMON_TRACE" -i "$WORK/all.json" --max-traces 4 -o "$WORK/d.otlp" 2>"$WORK/d.err" ||
	fail "kmon-trace --max-traces: $(cat "$WORK/d.err")"
otlp_check "$WORK/d.otlp"
python3 - "$WORK/d.err" "$F/expected.json" <<'PY' || fail "bounded run: $(tail -1 "$WORK/d.err")"
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
e = json.load(open(sys.argv[2]))
assert s["evicted"] > 0, "nothing evicted"
assert s["spans_written"] == e["records"], "spans lost"
assert s["traces"] > len(e["traces"]), "no trace written in parts"
print(f"ok: --max-traces 4: {s['evicted']} traces written early, "
      f"{s['spans_written']} spans, none lost")
PY
"$KMON_TRACE" -i "$WORK/all.json" --max-spans 5 -o "$WORK/e.otlp" 2>"$WORK/e.err" ||
	fail "kmon-trace --max-spans: $(cat "$WORK/e.err")"
python3 - "$WORK/e.err" "$WORK/e.otlp" <<'PY' || fail "--max-spans 5"
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert s["evicted"] > 0, "nothing evicted"
for line in open(sys.argv[2]):
    n = sum(len(ss["spans"]) for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"])
    assert n <= 5, f"a trace of {n} spans with --max-spans 5"
print(f"ok: --max-spans 5: {s['evicted']} traces written early")
PY

# Bad records: refused with the reason, counted, the rest still traced.
{
	head -3 "$F/node-1.json"
	echo 'not json'
	echo '{"kind":"tcp","ts":1795000000000000000,"node":"n","latency_ns":5,"lport":1,"rport":2,"trace":"0123456789abcdef0123456789abcdef"}'
	echo '{"kind":"tcp","ts":1795000000000000000,"node":"n","latency_ns":5,"lport":1,"rport":2,"id":"00000000000000zz","trace":"0123456789abcdef0123456789abcdef"}'
	echo '{"kind":"tcp","ts":1795000000000000000,"node":"n","latency_ns":5,"lport":70000,"rport":2,"id":"0000000000000001","trace":"0123456789abcdef0123456789abcdef"}'
	echo '{"kind":"tcp","ts":1795000000000000000,"node":"n","latency_ns":5,"lport":1,"rport":2,"id":"0000000000000001","trace":"0123456789abcdef0123456789abcdef","side":"proxy"}'
} | "$KMON_TRACE" -i - -o "$WORK/f.otlp" 2>"$WORK/f.err" || fail "kmon-trace on bad records: $(cat "$WORK/f.err")"
for why in '<stdin>:4: rejected: not JSON' '<stdin>:5: rejected: id: missing' \
	'<stdin>:6: rejected: id: invalid' '<stdin>:7: rejected: lport: invalid' \
	'<stdin>:8: rejected: side: "proxy" is neither server nor client'; do
	grep -qF "$why" "$WORK/f.err" || fail "no '$why' in: $(cat "$WORK/f.err")"
done
grep -q '"records":8,"rejected":5,' "$WORK/f.err" || fail "counts: $(tail -1 "$WORK/f.err")"
[ -s "$WORK/f.otlp" ] || fail "the good records made no trace"
echo "ok: bad records refused with their reason and counted"
