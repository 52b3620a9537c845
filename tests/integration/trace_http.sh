#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace's OTLP/HTTP output, against a receiver on loopback: POSTs to
# URL/v1/traces with Content-Type application/json; the bodies are valid
# ExportTraceServiceRequests (OpenTelemetry's definitions) that together
# hold exactly the expected traces, each once; a busy collector (503) is
# retried; -H headers go with every POST; partialSuccess, refusals and an
# absent collector are counted.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/otlp.sh"

otlp_setup
SEED=${SEED:-$RANDOM}
echo "seed $SEED"
trace_gen "$WORK/fleet" --requests 40 --seed "$SEED"
cat "$WORK/fleet"/node-*.json >"$WORK/all.json"

# start_receiver NAME [ARGS...]: sets URL
start_receiver() {
	local name=$1 i
	shift
	python3 "$OTLP_LIB/otlp_receiver.py" "$WORK/$name.port" "$WORK/$name.log" "$@" \
		2>"$WORK/$name.err" &
	STARTED_PIDS+=($!)
	for ((i = 0; i < 50; i++)); do
		[ -s "$WORK/$name.port" ] && break
		sleep 0.1
	done
	[ -s "$WORK/$name.port" ] || fail "receiver $name did not start: $(cat "$WORK/$name.err")"
	URL=http://127.0.0.1:$(cat "$WORK/$name.port")
}

# stat FILE KEY: KEY of kmon-trace's final counts in FILE
stat() {
	tail -1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

"$KMON_TRACE" -i - -u ftp://x >/dev/null 2>&1 </dev/null
expect_eq "kmon-trace -u with a non-http URL" $? 2
"$KMON_TRACE" -i - -u http://127.0.0.1:1 -H "no colon" >/dev/null 2>&1 </dev/null
expect_eq "kmon-trace -H without a colon" $? 2

# A collector that is busy once, then takes everything (one rejected
# span reported back); the traces also go to a file with -o.
start_receiver good --busy 1 --partial 1
"$KMON_TRACE" -i "$WORK/all.json" -u "$URL/" -H "Authorization: Bearer t0ken" \
	-o "$WORK/file.otlp" 2>"$WORK/good.stats" ||
	fail "kmon-trace -u: $(cat "$WORK/good.stats")"
python3 - "$WORK/good.log" "$WORK/bodies.json" "$WORK/split.otlp" <<'PY' || fail "the POSTs"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert reqs, "no POST"
for r in reqs:
    assert r["path"] == "/v1/traces", r["path"]
    assert r["content_type"] == "application/json", r["content_type"]
    assert r["authorization"] == "Bearer t0ken", r["authorization"]
# the 503 one was sent again, byte for byte
assert reqs[0]["status"] == 503 and reqs[1]["body"] == reqs[0]["body"], "no retry"
ok = [r["body"] for r in reqs if r["status"] == 200]
with open(sys.argv[2], "w") as out:
    for b in ok:
        out.write(b + "\n")
# one line per trace, as trace_check reads them
traces = {}
for b in ok:
    for rs in json.loads(b)["resourceSpans"]:
        tid = rs["scopeSpans"][0]["spans"][0]["traceId"]
        traces.setdefault(tid, []).append(rs)
with open(sys.argv[3], "w") as out:
    for rss in traces.values():
        out.write(json.dumps({"resourceSpans": rss}) + "\n")
print(f"ok: {len(reqs)} POSTs to /v1/traces as application/json with -H, "
      f"{len(ok)} accepted, the 503 retried")
PY
otlp_check "$WORK/bodies.json"
trace_check "$WORK/split.otlp" "$WORK/fleet/expected.json"
trace_check "$WORK/file.otlp" "$WORK/fleet/expected.json"
expect_eq "posts counted" "$(stat "$WORK/good.stats" posts)" \
	"$(grep -c '"status": 200' "$WORK/good.log")"
expect_eq "posts failed" "$(stat "$WORK/good.stats" posts_failed)" 0
expect_eq "spans rejected (partialSuccess)" "$(stat "$WORK/good.stats" spans_rejected)" 1

# A collector that refuses (400): not retried, every span counted.
start_receiver bad --status 400
"$KMON_TRACE" -i "$WORK/all.json" -u "$URL" 2>"$WORK/bad.stats" ||
	fail "kmon-trace -u (refused): $(cat "$WORK/bad.stats")"
[ -s "$WORK/bad.stats" ] && grep -q "HTTP 400" "$WORK/bad.stats" ||
	fail "no HTTP 400 in: $(cat "$WORK/bad.stats")"
expect_eq "POSTs to a refusing collector (no retry)" "$(wc -l <"$WORK/bad.log")" \
	"$(stat "$WORK/bad.stats" posts_failed)"
expect_eq "spans not delivered" "$(stat "$WORK/bad.stats" spans_failed)" \
	"$(stat "$WORK/bad.stats" spans_written)"

# No collector at all: a closed port on loopback.
port=$(test_port)
"$KMON_TRACE" -i "$WORK/all.json" -u "http://127.0.0.1:$port" 2>"$WORK/none.stats" ||
	fail "kmon-trace -u (no collector): $(cat "$WORK/none.stats")"
grep -q "Couldn't connect\|Could not connect" "$WORK/none.stats" ||
	fail "no connection error in: $(cat "$WORK/none.stats")"
expect_eq "spans not delivered without a collector" "$(stat "$WORK/none.stats" spans_failed)" \
	"$(stat "$WORK/none.stats" spans_written)"
