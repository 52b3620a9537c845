#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A loopback server with known service times (5, 20, 50 ms) reached over a
# persistent connection, short connections, IPv6, and a connection opened
# before kmond started: one tcp record per request, each with its exact
# bytes and a latency of at least its service time and at most what its
# client measured of the call. The server is named by the port it listens
# on.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

CHECK="python3 $(dirname "$0")/../lib/tcp_check.py"
PORT=$(test_port)

start_svc test $SVC server --port $PORT --v6
server=$SVC_PID

# Connected now, asks only once kmond runs.
$SVC client --port $PORT --ms 7 --repeat 20 --wait "$WORK/go" --log "$WORK/calls" >"$WORK/old.n" &
old=$!
STARTED_PIDS+=($old)
for _ in $(seq 50); do [ -e "$WORK/go.ready" ] && break; sleep 0.1; done
[ -e "$WORK/go.ready" ] || fail "the early client did not connect"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: timed
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
if [ -n "${KMOND_PROBE_DENY:-}" ]; then # run by tcp_fallback.sh
	grep "collector tcp: running" "$WORK/kmond.err"
	grep -q "collector tcp: running (.*raw_tp" "$WORK/kmond.err" ||
		fail "the syscall fallback was not chosen"
fi
# The state lives in the sockets only with every hook on tp_btf (not on a
# kernel before 6.3, which lacks sock_{recv,send}_length, nor denied), and
# an iterator to flush them (not on a kernel refusing iterators).
if grep -E 'sock_(recv|send|state): attach with ' "$WORK/kmond.err" | grep -vq 'attach with tp_btf' ||
	grep -q 'flush: attach with run' "$WORK/kmond.err"; then
	want_store="a hash"
else
	want_store="the sockets"
fi
grep -q "tcp: connection state in $want_store" "$WORK/kmond.err" ||
	fail "connection state is not in $want_store"

touch "$WORK/go"
wait $old || fail "the early client failed"
n_persistent=$($SVC client --port $PORT --mode persistent --repeat 3 --log "$WORK/calls")
n_short=$($SVC client --port $PORT --mode short --repeat 2 --log "$WORK/calls")
n_v6=$($SVC client --port $PORT --host ::1 --repeat 2 --log "$WORK/calls")
sleep 1.2 # two intervals
# Every connection closed: the kernel forgot them all.
conns=$(map_entries $KMOND_PID conns)
expect_eq "connections still in the kernel's table" "$conns" 0
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
$CHECK "$out" --pid $server --log "$WORK/calls" >"$WORK/groups" ||
	fail "records out of bounds"
cat "$WORK/groups"
for ms in 5 20 50; do
	want=$(((n_persistent + n_short) / 3))
	got=$(awk -v ms=$ms '$1 == "ipv4" && $2 == "127.0.0.1" && $3 == ms { print $4 }' "$WORK/groups")
	expect_eq "IPv4 requests of $ms ms" "$got" $want
	got=$(awk -v ms=$ms '$1 == "ipv6" && $2 == "::1" && $3 == ms { print $4 }' "$WORK/groups")
	expect_eq "IPv6 requests of $ms ms" "$got" $((n_v6 / 3))
done
got=$(awk '$3 == 7 { print $4 }' "$WORK/groups")
expect_eq "requests on the connection older than kmond" "$got" "$(cat "$WORK/old.n")"
total=$($RECORDS "$out" --kind tcp --count)
expect_eq "tcp records in all" "$total" $((n_persistent + n_short + n_v6 + 20))
services=$($RECORDS "$out" --kind tcp --values service | sort -u)
expect_eq "service of every record" "$services" timed
lport=$($RECORDS "$out" --kind tcp --values lport | sort -u)
expect_eq "local port of every record" "$lport" $PORT
