#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Drops on a socket are attributed to the socket's owner, not to whatever
# task the softirq interrupted, and filtered by the owner's service. A
# selected process (kmt_syn) listens behind a socket filter that drops every
# SYN (SOCKET_FILTER); an unselected one (kmt_other) sends the SYNs, so the
# drops run in kmt_other's context but belong to kmt_syn. The other way
# round (kmt_other listens, kmt_syn sends) nothing is reported, nor are
# drops without an owner (SYNs to a closed port, NO_SOCKET). Owners of
# sockets older than kmond and younger are both known.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/syn_listen.sh"

N=5
NS=kmt-drop-$$
ADDR=127.38.0.2
PORT=$((20000 + RANDOM % 10000))
CLOSED=$((PORT + 1))
OTHER=$((PORT + 2))
LATER=$((PORT + 3))

ip netns add "$NS" || fail "cannot create netns $NS"
trap 'ip netns del "$NS" 2>/dev/null; cleanup' EXIT
ip -n "$NS" link set lo up
cp "$BUILD/tests/kmt_syn" "$WORK/kmt_syn"
cp "$BUILD/tests/kmt_syn" "$WORK/kmt_other"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: syn-svc
    match: { comm: kmt_syn }
collectors:
  drop: {}
YAML
# listen NAME PORT: starts a dropping listener, waits until it listens.
listen() {
	syn_listen "$NS" "$WORK/$1" $ADDR $2
}
# One selected listener predates kmond (its owner comes from the sockets
# kmond finds at start), the other comes after (learned as it listens).
listen kmt_syn $PORT
owner=${STARTED_PIDS[-1]}
start_kmond "$WORK/kmond.yaml"
listen kmt_syn $LATER
later=${STARTED_PIDS[-1]}
listen kmt_other $OTHER

ip netns exec "$NS" "$WORK/kmt_other" syn $ADDR $PORT $N ||
	fail "SYNs to the selected listener"
ip netns exec "$NS" "$WORK/kmt_other" syn $ADDR $LATER $N ||
	fail "SYNs to the selected listener started after kmond"
ip netns exec "$NS" "$WORK/kmt_syn" syn $ADDR $OTHER $N ||
	fail "SYNs to the unselected listener"
ip netns exec "$NS" "$WORK/kmt_syn" closed $ADDR $CLOSED $N ||
	fail "SYNs to a closed port"
sleep 1.2
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
sel=(--kind drop --where dport=$PORT --where daddr=$ADDR)
got=$($RECORDS "$out" "${sel[@]}" --values reason | sort -u)
expect_eq "reason of the filtered SYNs" "$got" SOCKET_FILTER
got=$($RECORDS "$out" "${sel[@]}" --sum count)
expect_eq "filtered SYNs counted" "$got" $N
got=$($RECORDS "$out" "${sel[@]}" --where count=1 --count)
expect_eq "one record per drop (below the sample budget)" "$got" $N
got=$($RECORDS "$out" "${sel[@]}" --values pid | sort -u)
expect_eq "owner pid" "$got" $owner
got=$($RECORDS "$out" "${sel[@]}" --values comm | sort -u)
expect_eq "owner comm" "$got" kmt_syn
got=$($RECORDS "$out" "${sel[@]}" --values service | sort -u)
expect_eq "owner service" "$got" syn-svc
got=$($RECORDS "$out" --kind drop --where dport=$LATER --values pid | sort -u)
expect_eq "owner of the listener started after kmond" "$got" $later
got=$($RECORDS "$out" --kind drop --where dport=$LATER --sum count)
expect_eq "drops on it" "$got" $N
got=$($RECORDS "$out" --kind drop --where dport=$CLOSED --count)
expect_eq "ownerless drops with services configured" "$got" 0
got=$($RECORDS "$out" --kind drop --where dport=$OTHER --count)
expect_eq "drops on an unselected listener, sent by a selected process" "$got" 0
got=$($RECORDS "$out" --kind drop --where service=null --count)
expect_eq "drop records without a service" "$got" 0
