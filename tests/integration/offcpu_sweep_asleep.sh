#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A thread asleep while the stacks are swept keeps its user stack: the
# sweep cannot list the blocks noted in task storage, so the kernel counts
# the user stack ids they hold (offcpu_ustack_pins) and the sweep keeps
# those. The helper blocks once, for up to a minute; churn forces a sweep
# meanwhile (700 short processes of another service, each blocking once
# from its own stack: stacks lost to taken buckets, and keys deleted,
# both lead to one); once kmond has logged it, the test ends the helper's
# block with SIGSTOP (alive, so that its frames can be symbolized), and
# that block must have its user frames.
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
# a minute, or more where the 700 execs below are slower (an arm64 guest:
# 80 s); it is killed once the sweep is seen
"$WORK/kmt_named" $((60000 * ${TEST_TIME_SCALE:-1})) 1 &
named=$!
STARTED_PIDS+=("$named")
sleep 0.3
swept=$(grep -c "offcpu: stacks swept" "$WORK/kmond.err" || true)
for ((i = 0; i < 700; i++)); do
	"$WORK/kmt_churn" 2 1 || fail "churn helper failed"
done
wait_for_log_count "offcpu: stacks swept" $((swept + 1)) ||
	fail "no stack sweep while the helper slept"
kill -0 "$named" 2>/dev/null || fail "the helper woke before the sweep"
kill -STOP "$named"
sleep 0.8 # collected while it is alive: its frames symbolized
kill -KILL "$named"
wait "$named" 2>/dev/null || true
stop_kmond

python3 - "$WORK/out.json" <<'PY' || fail "user frames across a sweep"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in recs if r["kind"] == "offcpu" and r["service"] == "named"
        and r["total_ns"] / r["count"] >= 1e9]
framed = [r for r in mine
          if any(f.startswith("kmt_offcpu_block+0x") for f in r["stack"])]
if sum(r["count"] for r in mine) != 1 or not framed:
    sys.exit(f"want the one long block, with kmt_offcpu_block: "
             f"{[(r['count'], r['stack']) for r in mine]}")
print(f"ok: a block of {framed[0]['total_ns'] / 1e9:.1f} s across the "
      f"sweep, in kmt_offcpu_block")
PY
