#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# User frames are symbolized from the process's own ELF symbols: the
# helper blocks in its function kmt_offcpu_block (a PIE: its load bias
# must be undone), which must appear as the innermost user frame.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_offcpu" "$WORK/kmt_named"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: named
    match: { comm: kmt_named }
collectors:
  offcpu: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
"$WORK/kmt_named" 20 30 || fail "helper failed"
sleep 0.8
stop_kmond

python3 - "$WORK/out.json" <<'PY' || fail "user frames"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in recs if r["kind"] == "offcpu" and r["service"] == "named"]
if not mine:
    sys.exit("no offcpu record for the helper")
hits = [r for r in mine
        if any(f.startswith("kmt_offcpu_block+0x") for f in r["stack"])]
blocks = sum(r["count"] for r in hits)
if blocks < 28:
    sys.exit(f"{blocks} blocks with a kmt_offcpu_block frame, want 30: "
             f"{[r['stack'] for r in mine]}")
st = hits[0]["stack"]
i = next(i for i, f in enumerate(st) if f.startswith("kmt_offcpu_block"))
if not st[i - 1].startswith("entry_SYSCALL"):
    sys.exit(f"kmt_offcpu_block is not the innermost user frame: {st}")
print(f"ok: {blocks} blocks in kmt_offcpu_block: {st[i:]}")
PY
