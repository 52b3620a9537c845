#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: client and server busy-poll, pinned to CPUs 0 and 1
# A server's response ends at the entry of its last send, as a client's
# call starts at the entry of its first: so the client of an exchange
# waits at least as long as its server worked, whichever end runs first.
# A client that polls its socket on one CPU reads each answer while its
# server, on the other CPU, may still be in the send that queued it (a
# woken client that preempts its server does the same on PREEMPT_RT):
# with the response ending at the send's return, a few exchanges in ten
# thousand had the server work longer than its client waited. Then one
# answer of 32 MiB in one send that blocks until the client reads it,
# 300 ms after its request: the server's latency ends when that send
# began, the client's when it has read it all.
source "$(dirname "$0")/../lib/kmond.sh"

JOIN="python3 $(dirname "$0")/../lib/tcp_join.py"
[ "$(nproc)" -ge 2 ] || skip "one CPU: a client cannot poll beside its server"
"$KMOND" --probe 2>/dev/null | grep -Eq '^tcp +tcp_sendmsg +(tp_btf|raw_tp) ' ||
	skip "no send-entry hook loads on this kernel (tcp_sendmsg_locked, or the state in a hash for sys_enter): sends are stamped when they return"
N=20000
PORT=$(test_port)
# The exchanges' process (client and server) waits for the go file.
bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	"$2/tests/kmt_rpc" spin $3 $4 >"$1/spin.out" &&
	"$2/tests/kmt_rpc" slow $3 300 >"$1/slow.out"' _ "$WORK" "$BUILD" $PORT $N &
rpc=$!
STARTED_PIDS+=($rpc)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: rpc, match: { pid: $rpc } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.4 # one interval: the pid is selected
touch "$WORK/go"
wait $rpc || fail "kmt_rpc failed"
sleep 0.7
stop_kmond

python3 - "$WORK/out.json" $PORT <<'PY' >"$WORK/slow.json"
import json, sys
port = int(sys.argv[2])
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "tcp" and port in (r["lport"], r["rport"]) and \
            r["resp_bytes"] == 32 << 20:
        print(line, end="")
PY
pairs=$($JOIN join "$WORK/out.json" "$WORK/out.json") ||
	fail "a client waited less than its server worked, or records do not join"
expect_eq "exchanges joined, each client's latency >= its server's" "$pairs" \
	$(($(cat "$WORK/spin.out") + $(cat "$WORK/slow.out")))
client=$($RECORDS "$WORK/slow.json" --where side=client --sum latency_ns)
server=$($RECORDS "$WORK/slow.json" --where side=server --sum latency_ns)
echo "the 32 MiB answer: client ${client} ns, server ${server} ns"
[ "$client" -ge 300000000 ] || fail "the client read the answer in less than 300 ms"
[ "$server" -lt 100000000 ] ||
	fail "the server's latency ($server ns) ends when its send returned, not when it began"
