#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: a busy bpf() loop on CPU 0 makes every kmond miss events
# Runs the kernel skips are counted lost: a process doing bpf() map
# updates without pause on CPU 0 holds bpf_prog_active there most of the
# time, and the kernel runs no tracepoint program for the timer and
# softirq events of the interrupts that land meanwhile. kmond reads those
# skipped runs (recursion_misses, loader/misses.h) into its collectors'
# `missed`, and counts them in `lost`.
source "$(dirname "$0")/../lib/kmond.sh"

printf '%s\n6.7\n' "$(uname -r | cut -d- -f1)" | sort -V -C &&
	skip "the kernel counts no missed runs of tracepoint programs before 6.7 ($(uname -r))"
cp "$BUILD/tests/kmt_bpf_ops" "$WORK/kmt_bpf_ops"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: ops
    match: { comm: kmt_bpf_ops }
collectors:
  counters:
    tracepoints: [timer:hrtimer_expire_entry, irq:softirq_entry]
YAML
start_kmond "$WORK/kmond.yaml"
grep -q "collector counters: running (tracepoint)" "$WORK/kmond.err" ||
	fail "counters do not run on the tracepoint: $(grep counters "$WORK/kmond.err")"
taskset -c 0 "$WORK/kmt_bpf_ops" 3000000 || fail "kmt_bpf_ops failed"
sleep 0.7
stop_kmond

python3 - "$WORK/out.json" <<'PY' || fail "missed runs not counted"
import json, sys
stats = [json.loads(l) for l in open(sys.argv[1]) if '"kind":"stats"' in l]
last = stats[-1]
c = last["collectors"]["counters"]
print(f"counters: events {c['events']}, missed {c['missed']}, lost {c['lost']};"
      f" kernel lost {last['lost']['kernel']}")
assert c["missed"] > 0, "no run counted missed"
assert c["lost"] >= c["missed"], "missed runs not in lost"
assert last["lost"]["kernel"] >= c["missed"], "missed runs not in the kernel's lost"
missed = [s["collectors"]["counters"]["missed"] for s in stats]
assert missed == sorted(missed), f"missed goes down: {missed}"
PY
echo "ok: runs the kernel skipped are counted missed and lost"
