#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: estimates within 0.05 of each tier's busy clock
# occupancy where the service is not a tandem of FIFO single servers
# (issue 44): tier 1 a thread-per-connection front (tests/helpers/tandem.c
# --threads: each request served at once, side by side), handing each
# request on after a random delay (exponential, 5 ms) over one
# persistent connection to tier 2; a new connection per request; Poisson
# clients at 40/s; exponential services. Simulated, such a tandem read
# the lower tier at 0.47 to 0.59 where the truth was 0.31, with a fit
# that held. Checks: every estimate that holds is within 0.05 of each
# tier's own busy clock over its interval, or its 90% interval holds
# that; the others say why they do not hold (requests overtake each
# other: occupancy_order.h). Two tandems, two intervals of 10 s each.
source "$(dirname "$0")/../lib/kmond.sh"

PORT=$(test_port 4)
rate=40 interval=10
if [ "${TEST_TIME_SCALE:-1}" -gt 1 ]; then
	rate=20 interval=20
fi
python3 "$(dirname "$0")/../lib/tandem_eval.py" --kmond "$KMOND" \
	--tandem "$BUILD/tests/tandem" --work "$WORK" --port "$PORT" \
	--combos "0.37,0.7 0.6,0.3" --batch 2 --rate $rate \
	--interval $interval --samples 2 --seed 44 --front-threads \
	--handoff-us $((5000 * 40 / rate)) --per-request --kmond-prio 20 \
	--max-refused 1 --honest 0.05 --max-busy-err 0.02
rc=$?
[ $rc -eq 0 ] || fail "an estimate wrong by more than 0.05 that holds"
echo PASS
