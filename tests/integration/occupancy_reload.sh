#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# occupancy targets follow SIGHUP: a target added by a reload gets
# records from then on (without reloading the BPF programs) and its
# entry in the kernel's load_targets map, one removed gets none and its
# entry goes; a reload naming an unknown service is refused with
# file:line:col and the running targets stay.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

PORT=$(test_port)
start_svc svc $SVC server --port $PORT

write_config() { # TARGET (none: no occupancy section)
	{
		printf 'interval: 500ms\nservices:\n'
		printf '  - { name: svc, match: { port: %s } }\n' $PORT
		printf 'collectors:\n  tcp:\n    requests: none\n'
		[ "$1" != none ] && printf '    occupancy: [ { service: %s } ]\n' "$1"
	} >"$WORK/kmond.yaml.new"
	mv "$WORK/kmond.yaml.new" "$WORK/kmond.yaml"
}

# 60 requests of 2 to 10 ms, on 4 connections at once
traffic() {
	$SVC client --port $PORT --conns 4 --ms 2,3,5,10 --repeat 15 >/dev/null
	sleep 1.2 # two intervals: every request reported
}

count() { # occupancy records so far
	grep -c '"kind":"occupancy"' "$WORK/out.json"
}

write_config none
start_kmond "$WORK/kmond.yaml"
ids=$(prog_ids $KMOND_PID)
traffic
expect_eq "occupancy records without a target" "$(count)" 0

write_config svc
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "reload not done"
traffic
with=$(count)
[ "$with" -ge 1 ] || fail "no occupancy record once svc is a target"
echo "ok: $with occupancy records with the target"
expect_eq "programs after the reload" "$(prog_ids $KMOND_PID)" "$ids"
expect_eq "kernel entries of the target" "$(map_entries $KMOND_PID load_targets)" 1

write_config nosuch
kill -HUP $KMOND_PID
wait_for_log "reload refused" || fail "a target that is no service was taken"
grep -q "kmond.yaml:7:18: occupancy: 'nosuch' is not a service of this file" \
	"$WORK/kmond.err" || fail "no file:line:col for the unknown target"
traffic
[ "$(count)" -gt "$with" ] || fail "the running target stopped after a refused reload"
echo "ok: refused, the running target stays"

write_config none
kill -HUP $KMOND_PID
wait_for_log_count "reloaded" 2 || fail "second reload not done"
sleep 1.2 # the interval the reload fell in may still fit
before=$(count)
traffic
expect_eq "occupancy records after the target is removed" "$(count)" "$before"
expect_eq "kernel entries once the target is removed" \
	"$(map_entries $KMOND_PID load_targets)" 0
stop_kmond
echo PASS
