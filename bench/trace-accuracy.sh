#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The accuracy of kmond's parent links (precision, recall, calls left
# unlinked) on the trace harness's three-tier application
# (tests/lib/trace_app.py, tests/lib/trace_stack.sh), for each middle
# tier variant at concurrency 1, 8 and 32; tests/integration/
# trace_accuracy.sh is the short version that enforces the targets.
#   bench/trace-accuracy.sh [REQUESTS] [VARIANTS] [CONCURRENCIES]
# REQUESTS front requests per run at concurrency 1 (default 300; a run
# at concurrency C gets REQUESTS x (1 + C / 8)), VARIANTS of thread,
# pool, spawn (thread per connection, parallel calls from spawned
# threads), handoff (a pool whose selector thread reads the requests),
# asyncio, nginx (default all), CONCURRENCIES (default
# "1 8 32"). Run from the repository root after make, as root. Prints
# the table (tests/lib/trace_accuracy.py); the figures are counts, not
# timings, but how requests interleave depends on the machine's load.
# TRACE_KEEP=DIR keeps the records, ground truth and logs in DIR.
cd "$(dirname "$0")/.."
source tests/lib/kmond.sh
source tests/lib/caller.sh
source tests/lib/trace_stack.sh

N=${1:-300}
VARIANTS=${2:-thread pool spawn handoff asyncio nginx}
CONCS=${3:-1 8 32}
[ -x "$KMOND" ] || fail "no $KMOND: run make first"
trace_stack_start
trace_stack_config "$WORK/kmond.yaml"
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # two intervals: the pids are selected
trace_stack_warm
for variant in $VARIANTS; do
	for conc in $CONCS; do
		trace_stack_run $variant $conc $((N + N * conc / 8))
	done
done
trace_stack_stop
sleep 0.8 # the last requests, written at the close, are out
stop_kmond
echo "kmond $(git describe --always --dirty 2>/dev/null), $N requests per run at concurrency 1"
$TRACE_SCORE score "$WORK/truth" "$WORK/out.json"
# TRACE_KEEP=DIR: the records, the ground truth and the logs are kept there
[ -z "${TRACE_KEEP:-}" ] || cp -r "$WORK" "$TRACE_KEEP"
