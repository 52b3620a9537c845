#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Issue 44: how often the `occupancy` records' 90% credible intervals
# (rho_lo, rho_hi) hold the truth, on simulated tandems of the published
# protocol (81 pairs of rho in 0.1..0.9, windows of 2000 consecutive
# requests, seed 17), with and without a fixed delay of 250 us outside
# the tiers (as between real tiers). The simulator is the unit test's
# (tests/unit/test_occupancy_fit.c), run with more windows; prints each
# way's errors and the coverage per tier, overall and by range of rho.
#   bench/occupancy-coverage.sh          # 30 windows a pair: about 4 min
#   SAMPLES=10 bench/occupancy-coverage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s "$BUILD/tests/test_occupancy_fit"
OCC_SAMPLES=${SAMPLES:-30} "$BUILD/tests/test_occupancy_fit" 2>/dev/null |
	awk '/^simulated tandem, (sequence|a fixed delay)/ { on = 1 }
	     /^simulated tandem, (histogram|given n)/ { on = 0 }
	     on'
