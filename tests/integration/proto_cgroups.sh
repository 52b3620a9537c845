#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: no capture program on the root cgroup (other kmonds)
# Protocol identification runs its capture programs in the cgroups of the
# monitored processes only (user/collectors/proto_cgroups.h). A server in
# a cgroup of its own, started after kmond, and its clients in another:
# - every connection to it reads http (its cgroup got the programs when
#   it appeared), and the programs are attached to its cgroup alone: not
#   to the root, not to the clients' cgroup;
# - a monitored client (curl copied as kmt_curl) in a third cgroup, where
#   a process of its service runs already: its calls read http too (its
#   sends are the start of its streams: an active opener's SYN counts as
#   acknowledged data, which the programs take into account);
# - a connection older than its cgroup's programs (the server selected by
#   a reload after the connection's first exchange) is not named from its
#   later messages, which look like Redis: it stays unknown;
# - once the server has exited, the programs leave its cgroup.
source "$(dirname "$0")/../lib/kmond.sh"

need_protocols
ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$ROOT" ] || skip "no cgroup v2 hierarchy"
CG=$ROOT/kmond-test-$$
mkdir "$CG" "$CG/srv" "$CG/cli" "$CG/mon" "$CG/late" ||
	fail "cannot make cgroups under $ROOT"
cgroups_cleanup() {
	cleanup
	rmdir "$CG/srv" "$CG/cli" "$CG/mon" "$CG/late" "$CG" || echo "note: cgroups left under $CG"
}
trap cgroups_cleanup EXIT

in_cgroup() { # NAME CMD...: becomes CMD in cgroup $CG/NAME (in a subshell
	# or in the background: the pid stays the command's)
	local name=$1
	shift
	exec sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG/$name" "$@"
}

# attached CGROUP: how many of kmond's capture programs the cgroup holds
# itself (not from its ancestors)
attached() {
	bpftool cgroup show "$1" 2>/dev/null | grep -c 'proto_ingress\|proto_egress'
}

P=$(test_port 2)
WEB=$P LATE=$((P + 1))
N=10
config() { # the services: web, and late with $1 = yes
	{
		echo "interval: 300ms"
		echo "services:"
		echo "  - { name: web, match: { port: $WEB } }"
		echo "  - { name: caller, match: { comm: kmt_curl } }"
		[ "$1" = yes ] && echo "  - { name: late, match: { port: $LATE } }"
		echo "collectors:"
		echo "  tcp: { enabled: true }"
	} >"$WORK/kmond.yaml"
}
config no
start_kmond "$WORK/kmond.yaml" -v

# A real HTTP server in cgroup srv, started after kmond.
mkdir -p "$WORK/www" && echo hello >"$WORK/www/index.html"
in_cgroup srv python3 -m http.server --bind 127.0.0.1 --directory "$WORK/www" $WEB \
	>/dev/null 2>&1 &
WEB_PID=$!
STARTED_PIDS+=($WEB_PID)
wait_port $WEB || fail "the web server did not start"
wait_for_log "capture runs in cgroup /kmond-test-$$/srv" 5 ||
	fail "the capture programs did not come to the server's cgroup"
for ((i = 0; i < N; i++)); do
	(in_cgroup cli curl -s "http://127.0.0.1:$WEB/" >/dev/null) || fail "curl failed"
done
# ingress, and egress where sends are not read at tcp_sendmsg_locked
n=$(attached "$CG/srv")
[ "$n" -ge 1 ] || fail "no capture program in the server's cgroup"
echo "ok: $n programs in the server's cgroup"
expect_eq "programs in the clients' cgroup" "$(attached "$CG/cli")" 0
expect_eq "programs in the root cgroup" "$(attached "$ROOT")" 0

# The monitored client: one of its service holds its cgroup, then calls.
mkdir -p "$WORK/hold" "$WORK/call"
cp "$(command -v sleep)" "$WORK/hold/kmt_curl"
cp "$(command -v curl)" "$WORK/call/kmt_curl"
in_cgroup mon "$WORK/hold/kmt_curl" 60 &
STARTED_PIDS+=($!)
wait_for_log "capture runs in cgroup /kmond-test-$$/mon" 5 ||
	fail "the capture programs did not come to the client's cgroup"
for ((i = 0; i < N; i++)); do
	(in_cgroup mon "$WORK/call/kmt_curl" -s "http://127.0.0.1:$WEB/" >/dev/null) ||
		fail "kmt_curl failed"
done

# A connection older than its cgroup's programs. The server answers a
# line starting with '*' as Redis would, anything else with bytes of its
# own.
in_cgroup late python3 - $LATE <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
while True:
    c, _ = s.accept()
    while True:
        b = c.recv(4096)
        if not b:
            break
        c.sendall(b"+PONG\r\n" if b.startswith(b"*") else b"\x07\x01ok\x00")
    c.close()
PY
LATE_PID=$!
STARTED_PIDS+=($LATE_PID)
wait_port $LATE || fail "the late server did not start"
python3 - $LATE "$WORK/late" <<'PY' &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"\x05\x00\x10hello, ours\x00")
s.recv(64)
open(sys.argv[2] + ".first", "w").close()
while not os.path.exists(sys.argv[2] + ".go"):
    time.sleep(0.05)
for _ in range(5):
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    s.recv(64)
    time.sleep(0.05)
s.close()
PY
CLIENT_PID=$!
STARTED_PIDS+=($CLIENT_PID)
for ((i = 0; i < 50; i++)); do
	[ -e "$WORK/late.first" ] && break
	sleep 0.1
done
config yes
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" || fail "no reload"
wait_for_log "capture runs in cgroup /kmond-test-$$/late" 5 ||
	fail "the capture programs did not come to the late server's cgroup"
touch "$WORK/late.go"
wait $CLIENT_PID || fail "the late client failed"

# The server gone, its cgroup's programs go at the next interval.
kill $WEB_PID
wait $WEB_PID 2>/dev/null
for ((i = 0; i < 30; i++)); do
	[ "$(attached "$CG/srv")" = 0 ] && break
	sleep 0.1
done
expect_eq "programs in the server's cgroup after it exited" "$(attached "$CG/srv")" 0
sleep 0.7
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
expect_eq "web requests" "$($RECORDS "$out" --kind tcp --where service=web --count)" $((2 * N))
expect_eq "web requests named http" \
	"$($RECORDS "$out" --kind tcp --where service=web --where protocol=http --count)" $((2 * N))
expect_eq "calls of the monitored client" \
	"$($RECORDS "$out" --kind tcp --where service=caller --where side=client --count)" $N
expect_eq "calls of the monitored client named http" \
	"$($RECORDS "$out" --kind tcp --where service=caller --where side=client --where protocol=http --count)" $N
late=$($RECORDS "$out" --kind tcp --where service=late --count)
[ "$late" -ge 1 ] || fail "no request of the older connection was seen (want some, unknown)"
expect_eq "older connection's requests named redis" \
	"$($RECORDS "$out" --kind tcp --where service=late --where protocol=redis --count)" 0
echo "ok: $late requests of the older connection, none named"
grep -q '"protocol_cgroups"' "$out" || fail "no protocol_cgroups in the stats record"
echo "PASS"
