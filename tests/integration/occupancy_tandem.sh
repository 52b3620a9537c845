#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Estimated occupancy of hidden tiers on real processes (issue 17's
# protocol, a subset; bench/occupancy.sh runs all 81 pairs): nine two-tier
# tandems of single-server FIFO processes (tests/helpers/tandem.c) at
# rho1, rho2 in {0.2, 0.5, 0.8}, fixed seeds, Poisson clients at 50/s;
# kmond watches the front of each (its occupancy target) and tier 2.
# Each 10 s interval (about 500 requests) is one sample. Checks: tier 2's
# measured busy is within 0.02 of the time it held requests by its own
# clock, in every interval (a tight bound: that is kmond measuring); most
# samples are fitted and the estimates are near the configured
# utilizations (loose bounds: catching a broken pipeline, not grading the
# estimator; on a shared machine at load 9 to 23 on 2 cores, scheduling
# delays add to every response time, and 500 requests are a small
# sample; the estimator alone is graded by unit/occupancy_fit).
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port 18)
combos="0.2,0.2 0.2,0.5 0.2,0.8 0.5,0.2 0.5,0.5 0.5,0.8 0.8,0.2 0.8,0.5 0.8,0.8"
python3 "$(dirname "$0")/../lib/tandem_eval.py" --kmond "$KMOND" \
	--tandem "$BUILD/tests/tandem" --work "$WORK" --port "$PORT" \
	--combos "$combos" --rate 50 --interval 10 --samples 1 --seed 17 \
	--max-busy-err 0.02 --max-mae 0.25 --max-dist 0.35 --max-refused 0.34 ||
	fail "occupancy estimates or measured load out of bounds"
echo PASS
