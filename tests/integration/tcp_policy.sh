#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The requests policy picks which requests become tcp records; topology
# counts every request whatever it is. `none`: no record, full topology;
# then (SIGHUP) `slow: 30ms`: only the 50 ms requests; then `sample: 4`:
# one request in four.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

PORT=$(test_port)
start_svc timed $SVC server --port $PORT

config() { # REQUESTS
	cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: timed, match: { port: $PORT } }
collectors:
  tcp: { requests: $1 }
YAML
}
reload() { # REQUESTS
	local n
	config "$1"
	n=$(grep -c "reloaded" "$WORK/kmond.err")
	kill -HUP $KMOND_PID
	for _ in $(seq 50); do
		[ "$(grep -c "reloaded" "$WORK/kmond.err")" -gt "$n" ] && return
		sleep 0.1
	done
	fail "reload to $1 not done"
}
phase() { # the output's next line number, once an interval went by
	sleep 0.7
	echo $(($(wc -l <"$WORK/out.json") + 1))
}
# measure NAME CLIENT_ARGS...: runs the client between two interval ends;
# the records of that window go to $WORK/NAME.json, its count to $n.
measure() {
	local name=$1 from to
	shift
	from=$(phase)
	n=$($SVC client --port $PORT "$@")
	to=$(phase)
	tail -n +"$from" "$WORK/out.json" | head -n $((to - from)) >"$WORK/$name.json"
}
# window NAME KIND [--sum FIELD | --where ...]: count in a window
window() {
	local name=$1 kind=$2
	shift 2
	if [ "${1:-}" = --sum ]; then
		$RECORDS "$WORK/$name.json" --kind "$kind" --where dst=timed "$@"
	else
		$RECORDS "$WORK/$name.json" --kind "$kind" "$@" --count
	fi
}

config none
start_kmond "$WORK/kmond.yaml"
measure none --ms 5,50 --repeat 4
expect_eq "tcp records with requests: none" "$(window none tcp)" 0
expect_eq "topology requests with requests: none" \
	"$(window none topology --sum requests)" "$n"

reload "{ slow: 30ms }"
measure slow --ms 5,50 --repeat 4
expect_eq "tcp records with slow: 30ms" "$(window slow tcp)" $((n / 2))
expect_eq "of them, 50 ms requests" \
	"$(window slow tcp --where req_bytes=150)" $((n / 2))
expect_eq "topology requests with slow: 30ms" \
	"$(window slow topology --sum requests)" "$n"

reload "{ sample: 4 }"
measure sample --ms 1 --repeat 40
expect_eq "tcp records with sample: 4" "$(window sample tcp)" $((n / 4))
expect_eq "topology requests with sample: 4" \
	"$(window sample topology --sum requests)" "$n"
stop_kmond
