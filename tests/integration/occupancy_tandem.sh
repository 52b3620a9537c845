#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Estimated occupancy of hidden tiers on real processes (issue 17's
# protocol, a subset; bench/occupancy.sh runs all 81 pairs): nine two-tier
# tandems of single-server FIFO processes (tests/helpers/tandem.c) at
# rho1, rho2 in {0.2, 0.5, 0.8}, fixed seeds, Poisson clients at 50/s;
# kmond watches the front of each (its occupancy target) and tier 2.
# Each 10 s interval (about 500 requests) is one sample. Checks: tier 2's
# measured busy is within 0.02 of the time it held requests by its own
# clock and of its realized utilization, in every interval (measured:
# 0.0004 and 0.0032 at most); most samples are fitted and the estimates
# are near the configured utilizations (bounds about twice what was
# measured on a shared machine at load 13 on 2 cores, MAE 0.046 / 0.076
# and distance 0.093: 9 samples of 500 requests vary; the estimator alone
# is graded by unit/occupancy_fit). Every fit is refined by the number of
# requests in progress at each arrival, which the kernel keeps for the
# targets (occupancy_given_n.h).
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port 18)
combos="0.2,0.2 0.2,0.5 0.2,0.8 0.5,0.2 0.5,0.5 0.5,0.8 0.8,0.2 0.8,0.5 0.8,0.8"
# A tier that holds requests without serving them (0.0032 of the time
# at most here, 0.026 in a qemu guest without KVM) is not the queue the
# estimator models: skipped past 0.01, once kmond's busy is checked.
python3 "$(dirname "$0")/../lib/tandem_eval.py" --kmond "$KMOND" \
	--tandem "$BUILD/tests/tandem" --work "$WORK" --port "$PORT" \
	--combos "$combos" --rate 50 --interval 10 --samples 1 --seed 17 \
	--max-busy-err 0.02 --max-mae 0.15 --max-dist 0.2 --max-refused 0.23 \
	--require-given-n --max-overhead 0.01
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "occupancy estimates or measured load out of bounds"
echo PASS
