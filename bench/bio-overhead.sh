#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Cost of the bio collector: O_DIRECT dd throughput without and with kmond
# following every I/O, and each BPF program's cost per event
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt).
#   bench/bio-overhead.sh [BS] [COUNT] [ROUNDS]   (as root, after make)
# Default: 4k x 16384 (64 MiB, one I/O per block), 3 rounds each, best kept.
# SLOW=10ms also takes the submitter's stack at every I/O start.
cd "$(dirname "$0")/.."
source bench/lib.sh
BS=${1:-4k}
COUNT=${2:-16384}
ROUNDS=${3:-3}
# On the disk that holds the build (not a tmpfs).
bench_init "$PWD/build/bio-bench.XXXXXX"

cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
collectors:
  bio: { enabled: true${SLOW:+, slow: $SLOW} }
exporters:
  - { type: file, path: "$WORK/out.json" }
YAML

# Best of ROUNDS: bytes/s of a write then a read pass.
best_rate() {
	local op=$1 best=0 rate
	for ((r = 0; r < ROUNDS; r++)); do
		if [ "$op" = write ]; then
			rate=$(dd if=/dev/zero of="$WORK/file" bs="$BS" count="$COUNT" \
				oflag=direct 2>&1 | awk '/copied/ { print int($1 / $(NF-3)) }')
		else
			rate=$(dd if="$WORK/file" of=/dev/null bs="$BS" \
				iflag=direct 2>&1 | awk '/copied/ { print int($1 / $(NF-3)) }')
		fi
		[ "$rate" -gt "$best" ] && best=$rate
	done
	echo "$best"
}

base_w=$(best_rate write)
base_r=$(best_rate read)
sysctl -q kernel.bpf_stats_enabled=1
kmond_start "$WORK/kmond.yaml"
with_w=$(best_rate write)
with_r=$(best_rate read)
sleep 1.2
progs=$(bpf_progs bio_ | awk '{
	printf "  %-18s %8d ns/event (%d events)\n", $1, $2 / ($3 > 0 ? $3 : 1), $3 }')
hwm_kb=$(kmond_hwm_kib)
kmond_stop
ios=$(python3 tests/lib/records.py "$WORK/out.json" --kind bio --where comm=dd --sum count)

echo "dd bs=$BS count=$COUNT, best of $ROUNDS${SLOW:+, slow: $SLOW}"
echo "write without kmond: $((base_w / 1048576)) MiB/s   with: $((with_w / 1048576)) MiB/s"
echo "read  without kmond: $((base_r / 1048576)) MiB/s   with: $((with_r / 1048576)) MiB/s"
echo "I/Os of dd counted:  $ios"
echo "BPF per event:"
echo "$progs"
echo "kmond peak RSS:      $((hwm_kb / 1024)) MiB"
