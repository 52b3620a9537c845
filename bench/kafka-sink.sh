#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kafka sink throughput to a local broker (build/tests/kafka_broker,
# librdkafka's mock cluster on loopback), JSON encoding included.
# Target: >= 200k records/s on one core.
#   bench/kafka-sink.sh [N]      (default 1000000 records)
# Not a test: run it by hand, once (the broker runs on another core and
# its own cost is not counted; a real cluster's is not either).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${1:-1000000}

# The bench links the daemon's own library: the sink and the record
# encoder measured are the ones kmond runs.
make -s "$BUILD/bench/kafka_sink_bench" "$BUILD/tests/kafka_broker" >/dev/null

work=$(mktemp -d /tmp/kafka-bench.XXXXXX)
mkfifo "$work/in"
"$BUILD/tests/kafka_broker" -p 0 <"$work/in" >"$work/out" 2>"$work/err" &
broker=$!
exec 9>"$work/in"
trap 'exec 9>&-; kill $broker 2>/dev/null; wait $broker 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
	brokers=$(awk '/^bootstrap /{print $2}' "$work/out")
	[ -n "$brokers" ] && break
	sleep 0.1
done
[ -n "$brokers" ] || { cat "$work/err" >&2; exit 1; }

echo "kafka sink -> $brokers, $N records, librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?'), $(nproc) cores"
# The broker's CPU (clock ticks in /proc/PID/stat), to tell whether it is
# what limits the wall-clock rate.
ticks() { awk '{print $14 + $15}' "/proc/$broker/stat"; }
t0=$(ticks)
rc=0
"$BUILD/bench/kafka_sink_bench" "$brokers" "$N" || rc=$?
t1=$(ticks)
echo "broker (mock cluster, 1 thread per broker): $(((t1 - t0) * 1000 / $(getconf CLK_TCK))) ms CPU"
exit $rc
