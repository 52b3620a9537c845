#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A reload that removes a service stops measuring its open connections:
# of 6 requests on one connection, 3 before the reload and 3 after it, the
# first 3 are reported under the service and the last 3 under none. A
# reload that moves the process to another service (a second connection)
# reports its later requests under the new name.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

PORT=$(test_port 2)
start_svc gone $SVC server --port $PORT
gone=$SVC_PID
start_svc moved $SVC server --port $((PORT + 1))
moved=$SVC_PID

write_config() {
	{
		echo "interval: 300ms"
		echo "services:"
		printf '%s\n' "$@"
		echo "collectors:"
		echo "  tcp: { enabled: true }"
	} >"$WORK/kmond.yaml"
}
write_config "  - { name: old, match: { port: $PORT } }" \
	"  - { name: before, match: { port: $((PORT + 1)) } }"
start_kmond "$WORK/kmond.yaml"

# client PORT: 3 requests, then waits for $WORK/go.PORT, 3 more, closes.
client() {
	python3 - "$1" "$WORK/go.$1" <<'PY'
import os, socket, sys, time
def call(s, ms=1):
    s.sendall(b"%d 1001 " % ms + b"x" * (100 + ms - 8) + b"\n")
    got = 0
    while got < 1001:
        got += len(s.recv(4096))
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for _ in range(3):
    call(s)
open(sys.argv[2] + ".half", "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
for _ in range(3):
    call(s)
s.close()
PY
}
client $PORT &
c1=$!
client $((PORT + 1)) &
c2=$!
STARTED_PIDS+=($c1 $c2)
for f in "$WORK/go.$PORT.half" "$WORK/go.$((PORT + 1)).half"; do
	for _ in $(seq 50); do [ -e "$f" ] && break; sleep 0.1; done
	[ -e "$f" ] || fail "a client did not make its first requests"
done
write_config "  - { name: after, match: { port: $((PORT + 1)) } }"
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "no reload"
touch "$WORK/go.$PORT" "$WORK/go.$((PORT + 1))"
wait $c1 || fail "client 1 failed"
wait $c2 || fail "client 2 failed"
sleep 0.8
stop_kmond

out=$WORK/out.json
expect_eq "requests of the removed service" \
	"$($RECORDS "$out" --kind tcp --where pid=$gone --values service | sort | uniq -c | xargs)" "3 old"
expect_eq "requests of the moved process" \
	"$($RECORDS "$out" --kind tcp --where pid=$moved --values service | sort | uniq -c | xargs)" "3 after 3 before"
