#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-trace's cost per record: a generated fleet's tcp records
# (tests/lib/trace_gen.py, REQUESTS front requests, about 5.9 records
# each) read from a file, joined and written as OTLP JSON; CPU time
# (user + system, from the kernel's rusage) per record and peak RSS,
# median of ROUNDS runs.
#   bench/kmon-trace.sh [REQUESTS] [ROUNDS]   (after make)
cd "$(dirname "$0")/.."
REQUESTS=${1:-50000}
ROUNDS=${2:-5}
WORK=$(mktemp -d /tmp/kmon-trace-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

python3 tests/lib/trace_gen.py "$WORK/fleet" --requests "$REQUESTS" --seed 1 ||
	exit 1
cat "$WORK/fleet"/node-*.json >"$WORK/all.json"
python3 - "$WORK/all.json" "$ROUNDS" build/kmon-trace <<'PY'
import json, os, resource, statistics, subprocess, sys
path, rounds, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3]
records = sum(1 for _ in open(path))
cpu, rss = [], []
for _ in range(rounds):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([prog, "-i", path, "-o", "/dev/null"],
                       stderr=subprocess.PIPE, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    rss.append(after.ru_maxrss)  # KiB; the largest child so far
    stats = json.loads(p.stderr.splitlines()[-1])
    assert stats["spans_written"] == records and stats["rejected"] == 0
c = statistics.median(cpu)
print(f"{records} records, {stats['traces']} traces, {stats['joined']} joined: "
      f"median CPU {c:.3f} s = {c / records * 1e6:.2f} us/record "
      f"({records / c:.0f} records/s of one core), peak RSS {max(rss) / 1024:.1f} MiB "
      f"(all open at once: a file is flushed at its end)")
PY
