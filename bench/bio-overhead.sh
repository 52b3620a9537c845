#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the bio collector: O_DIRECT dd throughput without and with kmond
# following every I/O, and each BPF program's cost per event
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt).
#   bench/bio-overhead.sh [BS] [COUNT] [ROUNDS]   (as root, after make)
# Default: 4k x 16384 (64 MiB, one I/O per block), 3 rounds each, best kept.
# SLOW=10ms also takes the submitter's stack at every I/O start.
set -euo pipefail
cd "$(dirname "$0")/.."
BS=${1:-4k}
COUNT=${2:-16384}
ROUNDS=${3:-3}
# On the disk that holds the build (not a tmpfs).
work=$(mktemp -d "$PWD/build/bio-bench.XXXXXX")
kmond_pid=
cleanup() {
	[ -n "$kmond_pid" ] && kill -TERM "$kmond_pid" 2>/dev/null && wait "$kmond_pid"
	sysctl -q kernel.bpf_stats_enabled=0
	rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/kmond.yaml" <<YAML
interval: 1s
collectors:
  bio: { enabled: true${SLOW:+, slow: $SLOW} }
exporters:
  - { type: file, path: "$work/out.json" }
YAML

# Best of ROUNDS: bytes/s of a write then a read pass.
best_rate() {
	local op=$1 best=0 rate
	for ((r = 0; r < ROUNDS; r++)); do
		if [ "$op" = write ]; then
			rate=$(dd if=/dev/zero of="$work/file" bs="$BS" count="$COUNT" \
				oflag=direct 2>&1 | awk '/copied/ { print int($1 / $(NF-3)) }')
		else
			rate=$(dd if="$work/file" of=/dev/null bs="$BS" \
				iflag=direct 2>&1 | awk '/copied/ { print int($1 / $(NF-3)) }')
		fi
		[ "$rate" -gt "$best" ] && best=$rate
	done
	echo "$best"
}

base_w=$(best_rate write)
base_r=$(best_rate read)
sysctl -q kernel.bpf_stats_enabled=1
build/kmond -c "$work/kmond.yaml" 2>"$work/err" &
kmond_pid=$!
until grep -q "running on" "$work/err"; do sleep 0.1; done
with_w=$(best_rate write)
with_r=$(best_rate read)
sleep 1.2
progs=$(bpftool prog show -j | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("bio_"):
        n = p.get("run_cnt", 0)
        print("  %-18s %8d ns/event (%d events)" %
              (p["name"], p.get("run_time_ns", 0) // max(n, 1), n))')
hwm_kb=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$kmond_pid/status)
kill -TERM $kmond_pid
wait $kmond_pid
kmond_pid=
ios=$(python3 tests/lib/records.py "$work/out.json" --kind bio --where comm=dd --sum count)

echo "dd bs=$BS count=$COUNT, best of $ROUNDS${SLOW:+, slow: $SLOW}"
echo "write without kmond: $((base_w / 1048576)) MiB/s   with: $((with_w / 1048576)) MiB/s"
echo "read  without kmond: $((base_r / 1048576)) MiB/s   with: $((with_r / 1048576)) MiB/s"
echo "I/Os of dd counted:  $ios"
echo "BPF per event:"
echo "$progs"
echo "kmond peak RSS:      $((hwm_kb / 1024)) MiB"
