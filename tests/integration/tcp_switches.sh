#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# collectors.tcp.load and .paths, on real kernel events, and live: a
# middle service calls a back service for each request it serves, one
# thread per request (tests/lib/link_svc.py). With `load: false, paths:
# false` every request and call still has its record and its id, but no
# call has a parent, the stats count no call linked or unlinked, and no
# `load` record comes (neither the service's nor, client side, the
# endpoint's it calls); after a reload that turns both on (the same
# programs), every call has its request as parent, counted linked, and
# the load records of both sides count the requests; after one that
# turns them off again, none again.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/link_svc.sh"

MID=$(test_port 2)
BACK=$((MID + 1))
start_svc back $LINK back --port $BACK
start_svc mid $LINK mid --port $MID --back $BACK --mode threads \
	--log "$WORK/mid.log"

write_config() { # "SWITCHES" (tcp's extra keys)
	cat >"$WORK/kmond.yaml.new" <<YAML
interval: 500ms
services:
  - { name: mid, match: { port: $MID } }
collectors:
  tcp: { enabled: true$1 }
YAML
	mv "$WORK/kmond.yaml.new" "$WORK/kmond.yaml"
}

# 2 connections x 4 requests of one call each: 8 requests, 8 calls;
# then every record is out (the last ones at the close, an interval on).
traffic() {
	expect_eq "requests answered" \
		"$($LINK front --port $MID --conns 2 --per-conn 4 --shapes 1:0)" 8
	wait_served $MID $BACK
	sleep 1.2
}

# FILE PHASE: the phase's records checked against what it was switched to
check() {
	python3 - "$@" $MID $BACK <<'PY' || fail "records of phase $2"
import json, sys
path, phase, mid, back = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
recs = [json.loads(l) for l in open(path)]
tcp = [r for r in recs if r.get("kind") == "tcp"]
served = [r for r in tcp if r["side"] == "server" and r["lport"] == mid]
calls = [r for r in tcp if r["side"] == "client" and r["rport"] == back]
loads = [r for r in recs if r.get("kind") == "load"]
served_load = sum(r["arrivals"] for r in loads if r.get("service") == "mid")
called_load = sum(r["arrivals"] for r in loads
                  if r.get("endpoint") == f"127.0.0.1:{back}")
tcp_stats = [r["collectors"]["tcp"] for r in recs
             if r.get("kind") == "stats" and "tcp" in r.get("collectors", {})]
linked = sum(t.get("linked", 0) for t in tcp_stats)
unlinked = sum(t.get("unlinked", 0) for t in tcp_stats)
ok = True
def want(what, got, expected):
    global ok
    if got != expected:
        print(f"phase {phase}: {what}: {got}, expected {expected}", file=sys.stderr)
        ok = False
want("requests served", len(served), 8)
want("calls made", len(calls), 8)
want("records without an id", sum("id" not in r for r in served + calls), 0)
ids = {r["id"] for r in served}
parents = [r.get("parent") for r in calls]
if phase.startswith("off"):
    want("calls with a parent", sum(p is not None for p in parents), 0)
    want("calls counted linked, unlinked", (linked, unlinked), (0, 0))
    want("load records", len(loads), 0)
else:
    want("calls whose parent is a request served", sum(p in ids for p in parents), 8)
    want("calls counted linked, unlinked", (linked, unlinked), (8, 0))
    want("arrivals in mid's load records", served_load, 8)
    want("arrivals in the load records of the endpoint called", called_load, 8)
print(f"phase {phase}: {len(served)} requests, {len(calls)} calls, "
      f"{sum(p is not None for p in parents)} parents ({linked} linked), "
      f"{len(loads)} load records ({served_load} + {called_load} arrivals)")
sys.exit(0 if ok else 1)
PY
}

lines() { wc -l <"$WORK/out.json"; }
# PHASE FROM: the records after line FROM, checked
check_since() {
	tail -n +$(($2 + 1)) "$WORK/out.json" >"$WORK/$1.json"
	check "$WORK/$1.json" "$1"
}

write_config ", load: false, paths: false"
start_kmond "$WORK/kmond.yaml"
ids=$(prog_ids $KMOND_PID)
traffic
check_since off 0
at=$(lines)

write_config ""
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "reload not done"
traffic
check_since on "$at"
at=$(lines)

write_config ", load: false, paths: false"
kill -HUP $KMOND_PID
wait_for_log_count "reloaded" 2 || fail "second reload not done"
sleep 1.2 # the interval the reload fell in: the last one's load
at=$(lines)
traffic
expect_eq "programs after the reloads" "$(prog_ids $KMOND_PID)" "$ids"
stop_kmond
check_since off-again "$at"
echo PASS
