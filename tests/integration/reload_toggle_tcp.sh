#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The tcp collector switched off by SIGHUP while request events still sit
# in its ring buffer (it wakes user space only per batch) or in its
# kernel-side batch (up to 16 requests per CPU), then on again: the
# pending requests come out before it stops (it reports once more; its
# ring leaves the set kmond polls with it: the next poll must not call
# into the stopped collector), none is recorded while it is off, and all
# are again after.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

PORT=$(test_port)
start_svc web $SVC server --port $PORT
server=$SVC_PID
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { port: $PORT } }
collectors:
  tcp: { enabled: $1 }
  syscall: { enabled: true, syscalls: [getppid] }
YAML
}
requests() { $SVC client --port $PORT --ms 0 --repeat "$1" >/dev/null || fail "client"; }

write_config true
start_kmond "$WORK/kmond.yaml"
requests 30
write_config false
kill -HUP $KMOND_PID
wait_for_log "collector tcp: stopped" || fail "tcp not stopped"
requests 40
sleep 1.2 # an interval with tcp off: kmond polls the remaining rings
write_config true
kill -HUP $KMOND_PID
wait_for_log_count "collector tcp: running" 2 || fail "tcp not started again"
requests 50
sleep 1.2
kill -0 $KMOND_PID || fail "kmond died"
stop_kmond

expect_eq "tcp records: on, off, on again" \
	"$($RECORDS "$WORK/out.json" --kind tcp --where pid=$server --count)" 80
