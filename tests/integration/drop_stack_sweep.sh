#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: comm kmt_syn, which drop_owner's listeners share
# The drop collector's stacks are swept: with a map of two stacks
# (KMOND_TEST_DROP_STACKS=2), SYNs dropped over IPv4 fill it with
# tcp_v4_rcv's two stacks (the first SYN's differs below it: its route
# was not cached yet); a second later SYNs dropped over IPv6 have their
# own stack (tcp_v6_rcv), and a second after that IPv4's again. No record
# shows the other family's stack, and every record without one counts in
# stacks_lost. Without the sweep the map stays full of the first stacks
# and the later drops have none. (A phase may walk a third stack, its
# softirq run by ksoftirqd rather than the sender: then a record or two
# have none, counted; the phase still has its own.) The drops are a
# selected listener's (kmt_syn, behind a socket filter that drops every
# SYN): no other drop on the host, owned by no selected process, takes
# a stack.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/syn_listen.sh"

N=12
NS=kmt-dropsw-$$
ADDR4=127.38.0.2 # loopback, but an address nobody else uses
PORT=$((20000 + RANDOM % 10000))

ip netns add "$NS" || fail "cannot create netns $NS"
trap 'ip netns del "$NS" 2>/dev/null; cleanup' EXIT
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.lo.disable_ipv6=0 2>/dev/null
ip -n "$NS" -6 addr show dev lo | grep -q '::1/128' ||
	skip "no IPv6 on loopback in a network namespace"
cp "$BUILD/tests/kmt_syn" "$WORK/kmt_syn"
cp "$BUILD/tests/kmt_syn" "$WORK/kmt_other"

cat >"$WORK/kmond.yaml" <<YAML
interval: 200ms
services:
  - name: syn-svc
    match: { comm: kmt_syn }
collectors:
  drop: { samples: 4 }
YAML
KMOND_TEST_DROP_STACKS=2 start_kmond "$WORK/kmond.yaml"

syn_listen "$NS" "$WORK/kmt_syn" $ADDR4 $PORT
syn_listen "$NS" "$WORK/kmt_syn" ::1 $((PORT + 1))
syn_listen "$NS" "$WORK/kmt_syn" $ADDR4 $((PORT + 2))

# three phases, a port each, 1.5 s apart: a stack unused for two
# intervals goes at the next sweep
ip netns exec "$NS" "$WORK/kmt_other" syn $ADDR4 $PORT $N ||
	fail "IPv4 SYNs"
sleep 1.5
ip netns exec "$NS" "$WORK/kmt_other" syn ::1 $((PORT + 1)) $N ||
	fail "IPv6 SYNs"
sleep 1.5
ip netns exec "$NS" "$WORK/kmt_other" syn $ADDR4 $((PORT + 2)) $N ||
	fail "IPv4 SYNs, again"
sleep 1 # the summaries go out
stop_kmond

python3 - "$WORK/out.json" "$PORT" "$N" <<'PY' || fail "drop stacks swept"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
port, n = int(sys.argv[2]), int(sys.argv[3])
rcv = {"ipv4": "tcp_v4_rcv", "ipv6": "tcp_v6_rcv"}
bad = []
stackless = 0
for phase in range(3):
    drops = [r for r in recs if r["kind"] == "drop"
             and r["dport"] == port + phase]
    counted = sum(r["count"] for r in drops)
    names = [[f.split("+0x")[0] for f in r["stack"]] for r in drops]
    with_stack = sum(1 for s in names if s)
    print(f"phase {phase}: {len(drops)} records, {counted} drops, "
          f"{with_stack} with a stack")
    if counted != n:
        bad.append(f"phase {phase}: {counted} drops counted, want {n}")
    if with_stack < (len(drops) + 1) // 2:
        bad.append(f"phase {phase}: {with_stack} of {len(drops)} records "
                   f"with a stack: the map was not swept")
    for r, s in zip(drops, names):
        if s and rcv[r["family"]] not in s:
            bad.append(f"phase {phase}: {r['family']} drop, stack {s}")
stackless += sum(1 for r in recs if r["kind"] == "drop" and not r["stack"])
drop = [r for r in recs if r["kind"] == "stats"][-1]["collectors"]["drop"]
print(f"{stackless} records without a stack, stacks_lost "
      f"{drop['stacks_lost']}, lost {drop['lost']}")
if stackless > drop["stacks_lost"]:
    bad.append(f"{stackless} records without a stack, "
               f"stacks_lost {drop['stacks_lost']}")
if bad:
    sys.exit("\n".join(bad[:6]))
PY
