#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# min_block: blocks shorter than it are not counted (a 2 ms sleeper is
# invisible at 10 ms while a 20 ms sleeper is seen); a reload lowering it
# to 1 ms makes the short sleeper appear, with the same BPF programs.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_short"
cp "$BUILD/tests/kmt_nanosleep" "$WORK/kmt_long"
"$WORK/kmt_short" 2 4000 &
short=$!
"$WORK/kmt_long" 20 400 &
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
write_config 10ms
start_kmond "$WORK/kmond.yaml"
before=$(prog_ids "$KMOND_PID")
sleep 1.5
cp "$WORK/out.json" "$WORK/phase1.json"
write_config 1ms
kill -HUP "$KMOND_PID"
wait_for_log "reloaded" || fail "not reloaded"
sleep 1.5
after=$(prog_ids "$KMOND_PID")
stop_kmond

count() { # FILE SERVICE
	$RECORDS "$1" --kind offcpu --where service="$2" --sum count
}
n=$(count "$WORK/phase1.json" long)
[ "$n" -ge 40 ] || fail "min_block 10ms: $n blocks of the 20 ms sleeper, want ~70"
echo "ok: min_block 10ms: $n blocks of the 20 ms sleeper"
# A 2 ms sleep blocks 10 ms or more only when the machine is starved (a
# loaded qemu guest): what is counted of it must have blocked that long,
# and be rare (1.5 s of 2 ms sleeps are ~700 blocks).
n=$(count "$WORK/phase1.json" short)
ns=$($RECORDS "$WORK/phase1.json" --kind offcpu --where service=short --sum total_ns)
[ "$n" -le 70 ] || fail "min_block 10ms: $n blocks of the 2 ms sleeper, want 0 (a few when starved)"
[ "$ns" -ge $((n * 10000000)) ] || fail "min_block 10ms: $n blocks of the 2 ms sleeper in $ns ns: shorter than 10 ms"
echo "ok: min_block 10ms: $n blocks of the 2 ms sleeper, each >= 10 ms"
n=$(count "$WORK/out.json" short)
[ "$n" -ge 300 ] || fail "min_block 1ms after reload: $n blocks of the 2 ms sleeper, want ~700"
echo "ok: min_block 1ms after reload: $n blocks of the 2 ms sleeper"
[ -n "$before" ] || fail "no BPF programs"
expect_eq "BPF program ids across the reload" "$after" "$before"
