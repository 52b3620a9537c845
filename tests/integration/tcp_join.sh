#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Both ends of one exchange on one host, both monitored (over IPv4,
# IPv6, and a connection older than kmond): the caller's
# client-side record and the server's server-side record of each request
# carry the same req_seq and resp_seq (and the client port): every record
# joins exactly one of the other side, the client's latency at least the
# server's; dst names the server's service; topology is one edge
# caller -> api, counted once (by the server end). Then (SIGHUP) the
# caller's entry says `client: false`: server records only. Then
# `requests: { sample: 3 }` with the client side back: one request in
# three on each side, and topology still counts every one. Then
# collectors.tcp says `client: false`: server records only.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/caller.sh"

JOIN="python3 $(dirname "$0")/../lib/tcp_join.py"
PORT=$(test_port)
start_svc api $SVC server --port $PORT --v6
api=$SVC_PID
start_caller
# Connected now, asks only once kmond runs: both ends older than kmond.
$SVC client --port $PORT --ms 7 --repeat 2 --wait "$WORK/old" >"$WORK/old.out" &
old=$!
STARTED_PIDS+=($old)
for _ in $(seq 50); do [ -e "$WORK/old.ready" ] && break; sleep 0.1; done
[ -e "$WORK/old.ready" ] || fail "the early client did not connect"

config() { # CLIENT REQUESTS [TCP_CLIENT]
	cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: caller, match: { pid: $CALLER_PID }, client: $1 }
  - { name: caller, match: { pid: $old }, client: $1 }
  - { name: api, match: { pid: $api } }
collectors:
  tcp: { requests: $2, client: ${3:-true} }
YAML
}
reload() { # CLIENT REQUESTS [TCP_CLIENT]
	local n
	config "$@"
	n=$(grep -c "reloaded" "$WORK/kmond.err")
	kill -HUP $KMOND_PID
	for _ in $(seq 50); do
		[ "$(grep -c "reloaded" "$WORK/kmond.err")" -gt "$n" ] && return
		sleep 0.1
	done
	fail "reload to client: $1, requests: $2 ${3:-} not done"
}
mark() { # the output's next line number, once an interval went by
	sleep 0.7
	echo $(($(wc -l <"$WORK/out.json") + 1))
}
# window NAME FROM: the records from line FROM on, in NAME.json
window() {
	tail -n +"$2" "$WORK/out.json" >"$WORK/$1.json"
}
count() { # NAME KIND WHERE...
	local name=$1 kind=$2
	shift 2
	$RECORDS "$WORK/$name.json" --kind "$kind" "${@/#/--where=}" --count
}

config true all
start_kmond "$WORK/kmond.yaml"
if [ -n "${KMOND_PROBE_DENY:-}" ]; then # run by tcp_fallback.sh
	grep -q "collector tcp: running (.*raw_tp" "$WORK/kmond.err" ||
		fail "the syscall fallback was not chosen"
fi
sleep 0.4 # one interval: the pids are selected
from=$(mark)
in_caller persistent $SVC client --port $PORT --repeat 3
in_caller short $SVC client --port $PORT --mode short --repeat 1
in_caller v6 $SVC client --port $PORT --host ::1 --repeat 1
touch "$WORK/old"
wait $old || fail "the early client failed"
n=$(($(cat "$WORK/persistent.out") + $(cat "$WORK/short.out") + $(cat "$WORK/v6.out") + $(cat "$WORK/old.out")))
mark >/dev/null
window both "$from"
# (the first call on the connection older than kmond, 107 bytes, began
# before kmond knew the connection: its latency is not compared)
pairs=$($JOIN join "$WORK/both.json" "$WORK/both.json" --late-bytes 107) ||
	fail "the two ends do not join"
expect_eq "exchanges joined (client record = server record)" "$pairs" $n
expect_eq "server records" "$(count both tcp side=server)" $n
expect_eq "exchanges on the connection older than kmond" \
	"$(count both tcp side=client req_bytes=107)" "$(cat "$WORK/old.out")"
expect_eq "dst of the client records" \
	"$($RECORDS "$WORK/both.json" --kind tcp --where side=client --values dst | sort -u)" api
expect_eq "topology: client-side edges" "$(count both topology side=client)" 0
expect_eq "topology: edges" \
	"$($RECORDS "$WORK/both.json" --kind topology --values src | sort -u) -> $($RECORDS "$WORK/both.json" --kind topology --values dst | sort -u)" \
	"caller -> api"
expect_eq "topology: requests caller -> api" \
	"$($RECORDS "$WORK/both.json" --kind topology --sum requests)" $n

reload false all
from=$(mark)
in_caller off $SVC client --port $PORT --repeat 2
mark >/dev/null
window off "$from"
n=$(cat "$WORK/off.out")
expect_eq "client records with client: false" "$(count off tcp side=client)" 0
expect_eq "server records with client: false" "$(count off tcp side=server)" $n
expect_eq "topology requests with client: false" \
	"$($RECORDS "$WORK/off.json" --kind topology --sum requests)" $n

reload true "{ sample: 3 }"
from=$(mark)
in_caller sample $SVC client --port $PORT --ms 1 --repeat 30
mark >/dev/null
window sample "$from"
n=$(cat "$WORK/sample.out")
expect_eq "client records with sample: 3" "$(count sample tcp side=client)" $((n / 3))
expect_eq "server records with sample: 3" "$(count sample tcp side=server)" $((n / 3))
expect_eq "topology requests with sample: 3" \
	"$($RECORDS "$WORK/sample.json" --kind topology --sum requests)" $n

reload true all false
from=$(mark)
in_caller all_off $SVC client --port $PORT --repeat 1
mark >/dev/null
window all_off "$from"
n=$(cat "$WORK/all_off.out")
expect_eq "client records with collectors.tcp.client: false" "$(count all_off tcp side=client)" 0
expect_eq "server records with collectors.tcp.client: false" "$(count all_off tcp side=server)" $n
stop_kmond
