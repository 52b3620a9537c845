#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace on real kmond records: a two-tier application on one host
# (tests/lib/link_svc.py: a middle service, a thread per connection,
# calls a back service for each request: no call, one, two on one
# connection, three on three) with both tiers monitored. The records
# become exactly one trace per front request: the middle service's
# request at the root, its calls under it (kmond's parent links), the
# back service's request under each call (kmon-trace's join by sequence
# numbers); every line is valid OTLP by OpenTelemetry's definitions.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/link_svc.sh"
source "$(dirname "$0")/../lib/otlp.sh"

otlp_setup
BASE=$(test_port 2)
MID=$BASE BACK=$((BASE + 1))

start_svc back $LINK back --port $BACK
start_svc mid $LINK mid --port $MID --back $BACK --mode threads \
	--log "$WORK/mid.log"
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: mid, match: { port: $MID } }
  - { name: back, match: { port: $BACK } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
got=$($LINK front --port $MID --conns 3 --per-conn 4 --shapes 0:0,1:0,2:1,3:0)
expect_eq "front requests answered" "$got" 12
wait_served $MID $BACK
sleep 0.3 # the last closes of those, in softirq
stop_kmond

"$KMON_TRACE" -i "$WORK/out.json" -o "$WORK/traces.otlp" 2>"$WORK/trace.err" ||
	fail "kmon-trace: $(cat "$WORK/trace.err")"
otlp_check "$WORK/traces.otlp"
python3 "$(dirname "$0")/../lib/trace_shape.py" "$WORK/traces.otlp" \
	"$WORK/mid.log" --mid mid --back back ||
	fail "traces: $(tail -1 "$WORK/trace.err")"
rejected=$(tail -1 "$WORK/trace.err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rejected"])')
expect_eq "records kmon-trace rejected" "$rejected" 0
