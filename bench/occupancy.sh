#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Issue 17's evaluation on real processes: two-tier tandems at every
# (rho1, rho2) in {0.1 .. 0.9}^2 (81 pairs), SAMPLES samples each, a
# sample being one kmond interval of about RATE x INTERVAL requests (at
# most 2000), kmond's occupancy estimate against the configured
# utilizations (sorted pairs), and tier 2's measured busy against its own
# clock. Prints the table by range of rho (like the published Table II).
#   sudo bench/occupancy.sh                      # 81 x 30: about 3 hours
#   SAMPLES=3 sudo bench/occupancy.sh            # 81 x 3: about 30 minutes
#   SAMPLES=2 INTERVAL=20 sudo bench/occupancy.sh  # 81 x 2 of ~1000: 13 min
#   COMBOS="0.2,0.8 0.5,0.5" SAMPLES=5 sudo bench/occupancy.sh
# Env: SAMPLES (30), RATE (50 requests/s), INTERVAL (36 s: 1800 requests
# on average), BATCH (9 tandems at once), SEED (1), BUILD (build). A
# batch runs SAMPLES + 2 intervals (a warm-up, a partial last one).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s "$BUILD/kmond" "$BUILD/tests/tandem"
work=$(mktemp -d /tmp/kmond-occupancy.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -n "${COMBOS:-}" ]; then
	which=(--combos "$COMBOS")
else
	which=(--grid)
fi
python3 tests/lib/tandem_eval.py --kmond "$BUILD/kmond" \
	--tandem "$BUILD/tests/tandem" --work "$work" --port 28400 \
	"${which[@]}" --samples "${SAMPLES:-30}" --rate "${RATE:-50}" \
	--interval "${INTERVAL:-36}" --batch "${BATCH:-9}" --seed "${SEED:-1}" \
	--max-refused 1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine adds its delays)"
