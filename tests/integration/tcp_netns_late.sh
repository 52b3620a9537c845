#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A server that starts listening in its own network namespace after kmond
# (a container started later), selected by its port: the kernel counts
# its listen(), the listen list is read again, and every request counts.
# The list (a walk of /proc and of each namespace's /proc/PID/net/tcp) is
# read only after such a count moved, not every interval: 4 reads at
# start-up (the provider's, the tcp collector's before it attaches, one
# after, one 100 ms later) and at most 2 per listen() or close counted on
# the host (the kernel counts them in every namespace, this test's and
# any other process's).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/netns.sh"

NS=kmt_tcpnsl_$$
netns_alone "$NS"
PORT=$(test_port)

cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: contained
    match: { port: $PORT }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 1 # quiet intervals: nothing to read again
start_svc ns ip netns exec "$NS" $SVC server --port $PORT
sleep 0.6 # read at the next interval's end, its owner found
n=$(ip netns exec "$NS" $SVC client --port $PORT --ms 1 --repeat 5)
sleep 0.6
stop_kmond

out=$WORK/out.json
expect_eq "requests to the listener that came after kmond" \
	"$($RECORDS "$out" --kind tcp --where service=contained --where req_bytes=101 --count)" "$n"
intervals=$($RECORDS "$out" --kind stats --count)
reads=$($RECORDS "$out" --kind stats --values provider.listen_reads | tail -1)
changes=$($RECORDS "$out" --kind stats --values provider.listen_changes | tail -1)
echo "$intervals intervals, $reads reads of the listen list, $changes listen changes counted"
[ "$changes" -ge 1 ] || fail "the server's listen() was not counted"
[ "$reads" -le $((4 + 2 * changes)) ] ||
	fail "the listen list was read $reads times over $intervals intervals with $changes listen changes"
