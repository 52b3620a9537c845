#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A thread asleep while the stacks are swept keeps its user stack: the
# sweep cannot list the blocks noted in task storage, so the kernel counts
# the user stack ids they hold (offcpu_ustack_pins) and the sweep keeps
# those. The sweep is forced by churn: 700 short processes of another
# service, each blocking once, leave more keys deleted than
# OFFCPU_GC_ORPHANS (512) while the helper sleeps 3 times 4 s.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_offcpu" "$WORK/kmt_named"
cp "$BUILD/tests/kmt_offcpu" "$WORK/kmt_churn"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - { name: named, match: { comm: kmt_named } }
  - { name: churn, match: { comm: kmt_churn } }
collectors:
  offcpu: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
"$WORK/kmt_named" 4000 3 &
named=$!
sleep 0.3
for ((i = 0; i < 700; i++)); do
	"$WORK/kmt_churn" 2 1 || fail "churn helper failed"
done
wait_for_log "offcpu: stacks swept" 10 || fail "no stack sweep"
wait "$named" || fail "helper failed"
sleep 0.8
stop_kmond

python3 - "$WORK/out.json" <<'PY' || fail "user frames across a sweep"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in recs if r["kind"] == "offcpu" and r["service"] == "named"
        and 4e9 <= r["total_ns"] / r["count"] < 6e9]
framed = sum(r["count"] for r in mine
             if any(f.startswith("kmt_offcpu_block+0x") for f in r["stack"]))
bare = [r["stack"] for r in mine
        if not any(f.startswith("kmt_offcpu_block+0x") for f in r["stack"])]
if framed != 3:
    sys.exit(f"{framed} of the 3 blocks of 4 s with kmt_offcpu_block, "
             f"without user frames: {bare}")
print(f"ok: 3 blocks of 4 s across the sweep, each in kmt_offcpu_block")
PY
