#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# min_block: blocks shorter than it are not counted (a 2 ms sleeper is
# invisible at 10 ms while a 20 ms sleeper is seen); a reload lowering it
# to 1 ms makes the short sleeper appear, with the same BPF programs.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_short"
cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_long"
"$WORK/kmt_short" 2 15000 &
short=$!
"$WORK/kmt_long" 20 1500 &
long=$!
STARTED_PIDS+=("$short" "$long")
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: short
    match: { pid: $short }
  - name: long
    match: { pid: $long }
collectors:
  offcpu: { enabled: true, min_block: $1 }
YAML
}
count() { # FILE SERVICE
	$RECORDS "$1" --kind offcpu --where service="$2" --sum count
}
# wait_count SERVICE N: waits (10 s at most) until N blocks of SERVICE are
# in the records, so that a loaded machine only makes the test slower.
wait_count() {
	for _ in $(seq 100); do
		[ "$(count "$WORK/out.json" "$1")" -ge "$2" ] && return
		sleep 0.1
	done
}
write_config 10ms
start_kmond "$WORK/kmond.yaml"
before=$(prog_ids "$KMOND_PID")
wait_count long 40
# the complete lines only: kmond may be writing the next one
python3 -c 'import sys; d = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(d[:d.rfind("\n") + 1])' \
	"$WORK/out.json" "$WORK/phase1.json"
write_config 1ms
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" || fail "not reloaded"
wait_count short 300
after=$(prog_ids "$KMOND_PID")
stop_kmond

n=$(count "$WORK/phase1.json" long)
[ "$n" -ge 40 ] || fail "min_block 10ms: $n blocks of the 20 ms sleeper, want 40 or more"
echo "ok: min_block 10ms: $n blocks of the 20 ms sleeper"
# A 2 ms sleep blocks 10 ms or more only when the machine is starved (a
# loaded qemu guest): what is counted of it must have blocked that long,
# and be rare (it blocks ten times as often as the 20 ms sleeper).
long_blocks=$n
n=$(count "$WORK/phase1.json" short)
ns=$($RECORDS "$WORK/phase1.json" --kind offcpu --where service=short --sum total_ns)
[ "$n" -le "$long_blocks" ] || fail "min_block 10ms: $n blocks of the 2 ms sleeper, want 0 (a few when starved)"
[ "$ns" -ge $((n * 10000000)) ] || fail "min_block 10ms: $n blocks of the 2 ms sleeper in $ns ns: shorter than 10 ms"
echo "ok: min_block 10ms: $n blocks of the 2 ms sleeper, each >= 10 ms"
n=$(count "$WORK/out.json" short)
[ "$n" -ge 300 ] || fail "min_block 1ms after reload: $n blocks of the 2 ms sleeper, want 300 or more"
echo "ok: min_block 1ms after reload: $n blocks of the 2 ms sleeper"
[ -n "$before" ] || fail "no BPF programs"
expect_eq "BPF program ids across the reload" "$after" "$before"
