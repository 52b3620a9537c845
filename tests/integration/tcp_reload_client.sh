#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The client side across a reload, as tcp_reload_removed.sh is the server
# side: of 6 calls on one connection, 3 before the reload and 3 after it,
# a client whose service the reload removed has its first 3 under that
# service and no record after; a client the reload moved to another
# service (a second process) has its last 3 under the new name. The
# servers are not monitored; the connections are older than kmond.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

PORT=$(test_port)
start_svc server $SVC server --port $PORT

# caller NAME: connects, waits for $WORK/NAME.go, 3 calls, says
# NAME.half, waits for NAME.go2, 3 more, closes.
caller() {
	exec python3 - $PORT "$WORK/$1" <<'PY'
import os, socket, sys, time
def call(s, ms=1):
    s.sendall(b"%d 1001 " % ms + b"x" * (100 + ms - 8) + b"\n")
    got = 0
    while got < 1001:
        got += len(s.recv(4096))
def wait(path):
    while not os.path.exists(path):
        time.sleep(0.05)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2] + ".up", "w").close()
wait(sys.argv[2] + ".go")
for _ in range(3):
    call(s)
open(sys.argv[2] + ".half", "w").close()
wait(sys.argv[2] + ".go2")
for _ in range(3):
    call(s)
s.close()
PY
}
caller gone &
gone=$!
caller moved &
moved=$!
STARTED_PIDS+=($gone $moved)
wait_file() {
	for _ in $(seq 50); do [ -e "$1" ] && return 0; sleep 0.1; done
	fail "no $1"
}
wait_file "$WORK/gone.up"
wait_file "$WORK/moved.up"

write_config() {
	{
		echo "interval: 300ms"
		echo "services:"
		printf '%s\n' "$@"
		echo "collectors:"
		echo "  tcp: { enabled: true }"
	} >"$WORK/kmond.yaml"
}
write_config "  - { name: old, match: { pid: $gone } }" \
	"  - { name: before, match: { pid: $moved } }"
start_kmond "$WORK/kmond.yaml"
touch "$WORK/gone.go" "$WORK/moved.go"
wait_file "$WORK/gone.half"
wait_file "$WORK/moved.half"
write_config "  - { name: after, match: { pid: $moved } }"
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "no reload"
touch "$WORK/gone.go2" "$WORK/moved.go2"
wait $gone || fail "caller gone failed"
wait $moved || fail "caller moved failed"
sleep 0.8
stop_kmond

out=$WORK/out.json
expect_eq "calls of the removed service" \
	"$($RECORDS "$out" --kind tcp --where pid=$gone --values service | sort | uniq -c | xargs)" "3 old"
expect_eq "calls of the moved process" \
	"$($RECORDS "$out" --kind tcp --where pid=$moved --values service | sort | uniq -c | xargs)" "3 after 3 before"
expect_eq "side of every record" \
	"$($RECORDS "$out" --kind tcp --values side | sort -u)" client
