#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: no service filter: drop lost == 0 over every kfree_skb
# SYNs to a closed loopback port, over IPv4 and IPv6, in a network
# namespace of our own: the kernel drops each one (NO_SOCKET). kmond
# reports them with the right addresses and ports, the kernel's reason
# name, the receive path in the stack (tcp_v4_rcv / tcp_v6_rcv) innermost
# first and no owner; the first `samples` drops of a kind come one by one,
# the rest as a summary, and the counts add up to every SYN sent. UDP
# drops to the same port are not reported.
source "$(dirname "$0")/../lib/kmond.sh"

N=60
SAMPLES=4
NS=kmt-drop-$$
ADDR4=127.38.0.1 # loopback, but an address nobody else uses
PORT4=$((20000 + RANDOM % 10000))
PORT6=$((PORT4 + 1))

ip netns add "$NS" || fail "cannot create netns $NS"
trap 'ip netns del "$NS" 2>/dev/null; cleanup' EXIT
ip -n "$NS" link set lo up
NETNS=$(stat -L -c %i "/run/netns/$NS")
ipv6=1
ip netns exec "$NS" sysctl -qw net.ipv6.conf.lo.disable_ipv6=0 2>/dev/null
ip -n "$NS" -6 addr show dev lo | grep -q '::1/128' || ipv6=0

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
collectors:
  drop: { samples: $SAMPLES }
YAML
start_kmond "$WORK/kmond.yaml"

ip netns exec "$NS" "$BUILD/tests/kmt_syn" closed $ADDR4 $PORT4 $N ||
	fail "IPv4 SYN workload"
if [ $ipv6 = 1 ]; then
	ip netns exec "$NS" "$BUILD/tests/kmt_syn" closed ::1 $PORT6 $N ||
		fail "IPv6 SYN workload"
fi
# UDP to a closed port is dropped too (NO_SOCKET), but is not TCP.
for i in 1 2 3; do
	ip netns exec "$NS" bash -c "echo x >/dev/udp/$ADDR4/$PORT4" 2>/dev/null
done
sleep 1.2 # two intervals: the summaries go out
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"

# check_family FAMILY SADDR DADDR PORT RCV_FUNCTION
check_family() {
	local family=$1 saddr=$2 addr=$3 port=$4 rcv=$5 sel
	sel=(--kind drop --where family=$family --where daddr=$addr --where dport=$port)

	got=$($RECORDS "$out" "${sel[@]}" --values reason | sort -u)
	expect_eq "$family drop reasons" "$got" NO_SOCKET
	got=$($RECORDS "$out" "${sel[@]}" --values saddr | sort -u)
	expect_eq "$family source address" "$got" "$saddr"
	got=$($RECORDS "$out" "${sel[@]}" --values netns | sort -u)
	expect_eq "$family network namespace" "$got" "$NETNS"
	got=$($RECORDS "$out" "${sel[@]}" --values pid | sort -u)
	expect_eq "$family owner (no socket: none)" "$got" null
	got=$($RECORDS "$out" "${sel[@]}" --sum count)
	expect_eq "$family drops counted" "$got" $N
	singles=$($RECORDS "$out" "${sel[@]}" --where count=1 --where summary=null --count)
	summaries=$($RECORDS "$out" "${sel[@]}" --where summary=true --count)
	[ "$singles" -ge $SAMPLES ] && [ "$summaries" -ge 1 ] ||
		fail "$family: $singles single records, $summaries summaries"
	echo "ok: $family: $singles single records and $summaries summaries"
	python3 - "$out" "$family" "$addr" "$port" "$rcv" <<'PY' || fail "$family stacks"
import json, sys
path, family, addr, port, rcv = sys.argv[1:]
stacks = [r["stack"] for r in map(json.loads, open(path))
          if r["kind"] == "drop" and r["family"] == family
          and r["daddr"] == addr and r["dport"] == int(port)]
for s in stacks:
    names = [f.split("+0x")[0] for f in s]
    assert all("+0x" in f for f in s), f"not sym+0xoff: {s}"
    assert rcv in names, f"no {rcv} frame: {s}"
    assert not names[0].startswith("bpf_"), f"tracing frame on top: {s}"
    # innermost first: the receive function sits below the drop site
    # and above the softirq that ran it
    assert names.index(rcv) < names.index("net_rx_action"), s
print(f"ok: {len(stacks)} {family} stacks hold {rcv}, innermost first")
PY
}

check_family ipv4 127.0.0.1 $ADDR4 $PORT4 tcp_v4_rcv
if [ $ipv6 = 1 ]; then
	check_family ipv6 ::1 ::1 $PORT6 tcp_v6_rcv
else
	echo "skip: no IPv6 on loopback in $NS"
fi
got=$($RECORDS "$out" --kind drop --where reason=NOT_SPECIFIED --count)
expect_eq "ordinary frees reported (NOT_SPECIFIED)" "$got" 0
got=$($RECORDS "$out" --kind drop --where reason=SKB_CONSUMED --count)
expect_eq "ordinary frees reported (SKB_CONSUMED)" "$got" 0
stats_lost=$($RECORDS "$out" --kind stats --values collectors.drop.lost | tail -1)
expect_eq "drop events lost" "$stats_lost" 0
