#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Maps grown on demand (BPF_F_NO_PREALLOC) only where every program that
# updates them is tp_btf: on the raw_tp and tracepoint fallbacks (which
# kernels before 6.1 warn about and PREEMPT_RT refuses with such maps)
# the kernel stacks of offcpu, drop and bio, and tcp's edges are
# preallocated. Read from the maps kmond holds (bpftool), on each path.
source "$(dirname "$0")/../lib/kmond.sh"

# map_flags PID NAME: the map_flags of the BPF map NAME a process holds.
map_flags() {
	grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' >"$WORK/ids"
	bpftool map show -j | python3 -c '
import json, sys
ids = {int(l) for l in open(sys.argv[1])}
flags = [m["flags"] for m in json.load(sys.stdin)
         if m["id"] in ids and m.get("name") == sys.argv[2]]
print(flags[0] if len(flags) == 1 else f"{len(flags)} maps {sys.argv[2]}")' "$WORK/ids" "$2"
}

cat >"$WORK/kmond.yaml" <<YAML
collectors:
  offcpu: { enabled: true }
  tcp: { enabled: true }
  drop: { enabled: true }
  bio: { enabled: true, slow: 10ms }
YAML
# A kernel without sock_*_length (before 6.3) puts tcp's receive and
# send on raw_tp sys_exit whatever is denied: its edges are preallocated
# on every path.
tcp_btf=1
"$KMOND" --probe 2>/dev/null | grep -Eq '^tcp +sock_recv +tp_btf' || {
	tcp_btf=0
	echo "tcp's sock_recv is not on tp_btf here: edges preallocated in every case"
}
# DENY  the flags of offcpu_kstacks edges drop_kstacks bio_kstacks
# bio_kstacks_odd (1 = BPF_F_NO_PREALLOC)
while read -r deny flags; do
	[ "$deny" = - ] && deny=
	KMOND_PROBE_DENY=$deny start_kmond "$WORK/kmond.yaml"
	set -- $flags
	for map in offcpu_kstacks edges drop_kstacks bio_kstacks bio_kstacks_odd; do
		want=$1
		shift
		[ $map = edges ] && [ $tcp_btf = 0 ] && want=0
		expect_eq "$map flags with KMOND_PROBE_DENY='$deny'" \
			"$(map_flags "$KMOND_PID" $map)" "$want"
	done
	stop_kmond
done <<'CASES'
- 1 1 1 1 1
tp_btf:sched_switch 0 1 1 1 1
sched_switch,tp_btf:inet_sock_set_state 0 0 1 1 1
sock_recv_length,sock_send_length 1 0 1 1 1
tp_btf:kfree_skb,tp_btf:block_rq_issue 1 1 0 0 0
CASES
