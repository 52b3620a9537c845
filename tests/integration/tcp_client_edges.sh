#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The client side's hard cases, both ends monitored on one host:
# - pipelining: six requests sent before the first answer is read, on
#   one connection. The caller sent one burst and waited for all of it:
#   one client record with every byte. The server may have read the burst
#   at once or in parts: its records hold every byte too, never one twice.
# - a server that closes mid-response (it answers 300 bytes of 1005): the
#   close ends the call; client and server records say 300 bytes, and
#   join one to one.
# - a server that greets first (bytes before any call): they answer
#   nothing, the call after them is counted alone.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/caller.sh"

JOIN="python3 $(dirname "$0")/../lib/tcp_join.py"
BASE=$(test_port 3)
PIPE=$BASE CUT=$((BASE + 1)) GREET=$((BASE + 2))
start_svc pipe $SVC server --port $PIPE
pipe=$SVC_PID
start_svc cut $SVC server --port $CUT --cut 300
cut=$SVC_PID
# A greeting, then one line in, an answer twice as long, then close.
cat >"$WORK/greet_server.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    c.sendall(b"hello " * 10 + b"\n")
    f = c.makefile("rb")
    line = f.readline()
    c.sendall(b"z" * 2 * len(line))
    f.close()
    c.close()
PY
cat >"$WORK/greet_client.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
f.readline()
s.sendall(b"x" * 49 + b"\n")
n = 0
while True:
    b = s.recv(4096)
    if not b:
        break
    n += len(b)
print(n)
PY
python3 "$WORK/greet_server.py" $GREET "$WORK/greet.up" &
greet=$!
STARTED_PIDS+=($greet)
for _ in $(seq 50); do [ -e "$WORK/greet.up" ] && break; sleep 0.1; done
start_caller

cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: caller, match: { pid: $CALLER_PID } }
  - { name: pipe, match: { pid: $pipe } }
  - { name: cut, match: { pid: $cut } }
  - { name: greet, match: { pid: $greet } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.4 # one interval: the pids are selected

in_caller pipe $SVC client --port $PIPE --mode pipeline --ms 1,2,3 --repeat 2
in_caller cut $SVC client --port $CUT --mode cut --ms 5 --repeat 3
in_caller greet python3 "$WORK/greet_client.py" $GREET
sleep 0.7 # two intervals
stop_kmond
out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
expect_eq "pipelined requests answered" "$(cat "$WORK/pipe.out")" 6
expect_eq "calls the server cut" "$(cat "$WORK/cut.out")" 3
expect_eq "greeting server's answer" "$(cat "$WORK/greet.out")" 100

# sum FIELD SIDE PORT: over the records of one side on connections to PORT
sum() {
	local where=rport
	[ "$2" = server ] && where=lport
	$RECORDS "$out" --kind tcp --where side=$2 --where $where=$3 --sum $1
}
count() {
	local where=rport
	[ "$2" = server ] && where=lport
	$RECORDS "$out" --kind tcp --where side=$2 --where $where=$3 --count
}
req=$((6 * 100 + 2 * (1 + 2 + 3))) resp=$((6 * 1000 + 2 * (1 + 2 + 3)))
expect_eq "pipelining: client records" "$(count req_bytes client $PIPE)" 1
expect_eq "pipelining: client request bytes" "$(sum req_bytes client $PIPE)" $req
expect_eq "pipelining: client response bytes" "$(sum resp_bytes client $PIPE)" $resp
expect_eq "pipelining: server request bytes" "$(sum req_bytes server $PIPE)" $req
expect_eq "pipelining: server response bytes" "$(sum resp_bytes server $PIPE)" $resp
n=$(count x server $PIPE)
[ "$n" -ge 1 ] && [ "$n" -le 6 ] || fail "pipelining: $n server records"
echo "ok: pipelining: the server read the burst as $n request(s)"

expect_eq "cut: client records" "$(count x client $CUT)" 3
expect_eq "cut: client response bytes" "$(sum resp_bytes client $CUT)" 900
expect_eq "cut: server records" "$(count x server $CUT)" 3
expect_eq "cut: server response bytes" "$(sum resp_bytes server $CUT)" 900
grep -E "\"(rport|lport)\":$CUT," "$out" >"$WORK/cut.json"
pairs=$($JOIN join "$WORK/cut.json" "$WORK/cut.json") || fail "cut: the ends do not join"
expect_eq "cut: exchanges joined" "$pairs" 3

expect_eq "greeting: client records" "$(count x client $GREET)" 1
expect_eq "greeting: client bytes" \
	"$(sum req_bytes client $GREET) $(sum resp_bytes client $GREET)" "50 100"
expect_eq "greeting: server bytes" \
	"$(sum req_bytes server $GREET) $(sum resp_bytes server $GREET)" "50 100"
grep -E "\"(rport|lport)\":$GREET," "$out" >"$WORK/greet.json"
pairs=$($JOIN join "$WORK/greet.json" "$WORK/greet.json") || fail "greeting: the ends do not join"
expect_eq "greeting: exchanges joined" "$pairs" 1
