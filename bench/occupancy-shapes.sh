#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Issue 44: the occupancy estimate on real two-tier tandems built
# differently (tests/helpers/tandem.c), each tier's own busy clock over
# each interval as the truth: per shape, the MAE per tier against it,
# how often the 90% intervals hold it, and how many estimates do not hold
# (and why). Shapes:
#   fifo          FIFO single servers, a pool of connections (issue 17's)
#   per-request   the same, a new connection per request
#   fixed         fixed service times
#   lognormal     lognormal service times (sigma 1, CV 1.31)
#   threads       tier 1 a thread-per-connection front (requests served
#                 side by side), a new connection per request
#   threads-handoff  the same with a random hand-off (exponential, 5 ms
#                 at 40/s) between tier 1 and tier 2
#   python        both tiers in Python (tests/helpers/tandem_tier.py),
#                 one thread on an event loop serving on its CPU, in order
#   event-loop    tier 1 in Python on an event loop that waits each
#                 service out on a timer (requests served side by side),
#                 a new connection per request
#   three-tiers   a third tier (C, utilization 0.2) between the two;
#                 kmond fits two: the truth is the two busiest
# Each: COMBOS (default "0.3,0.7 0.7,0.3 0.5,0.5 0.2,0.4") at RATE
# (100/s; 40 for the threads shapes, as issue 44's check), SAMPLES
# intervals of INTERVAL s (3 of 10 s), about a minute a shape.
#   sudo [KEEP=DIR] bench/occupancy-shapes.sh [SHAPE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s "$BUILD/kmond" "$BUILD/tests/tandem"
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] ||
	shapes=(fifo per-request fixed lognormal threads threads-handoff
		python event-loop three-tiers)
for shape in "${shapes[@]}"; do
	rate=${RATE:-100} flags=()
	case $shape in
	fifo) ;;
	per-request) flags=(--per-request) ;;
	fixed | lognormal) flags=(--dist "$shape") ;;
	threads) rate=${RATE:-40} flags=(--front-threads --per-request) ;;
	threads-handoff)
		rate=${RATE:-40}
		flags=(--front-threads --per-request --handoff-us 5000)
		;;
	python) flags=(--front cpu --back cpu) ;;
	event-loop) rate=${RATE:-40} flags=(--front wait --per-request) ;;
	three-tiers) flags=(--middle 0.2) ;;
	*)
		echo "unknown shape $shape" >&2
		exit 2
		;;
	esac
	work=$(mktemp -d /tmp/kmond-shapes.XXXXXX)
	echo "== $shape (${flags[*]:-}) rate $rate/s"
	python3 tests/lib/tandem_eval.py --kmond "$BUILD/kmond" \
		--tandem "$BUILD/tests/tandem" --work "$work" --port 28700 \
		--combos "${COMBOS:-0.3,0.7 0.7,0.3 0.5,0.5 0.2,0.4}" \
		--batch 4 --rate "$rate" --interval "${INTERVAL:-10}" \
		--samples "${SAMPLES:-3}" --seed 44 --max-refused 1 \
		--honest 0.05 "${flags[@]}" 2>&1 |
		grep -E "against|credible|refused|honest|FAIL" || true
	# KEEP=DIR: each shape's estimates (samples.jsonl) kept as DIR/SHAPE.jsonl
	[ -z "${KEEP:-}" ] || cp "$work/samples.jsonl" "$KEEP/$shape.jsonl"
	rm -rf "$work"
done
