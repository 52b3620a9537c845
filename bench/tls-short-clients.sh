#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# How many short-lived TLS clients are read in plaintext (docs/design/
# tls.md, "Which processes"): RUNS curl runs in a row (one HTTPS request
# each, a process a run: attached at its exec, racing its first SSL
# call) against nginx, kmond monitoring both, once per way of attaching:
#   multi   uprobe_multi links (the default where the kernel has them)
#   perf    a perf event per uprobe (KMOND_PROBE_FAIL_LOAD=uprobe_multi)
# Per way: runs read whole (every record of the run http and tls),
# runs read in part, runs not read (records say tls), the stats'
# tls_attached_at_start and tls_gone_unattached, and the exec-to-attached
# delays kmond logged (median and max, us).
#   bench/tls-short-clients.sh [RUNS] [GAP_SECONDS]   (as root; 50, 0)
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS=${1:-50}
GAP=${2:-0}
PORT=18645
TLS=18646
make -s build/kmond || fail "cannot build kmond"
bench_init
source tests/lib/nginx.sh
source tests/lib/tls.sh
tls_cert bench.test
nginx_tls $TLS
start_nginx $PORT 1
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { comm: curl } }
collectors:
  tcp: { enabled: true }
YAML

one_way() { # NAME [ENV]
	[ -z "${2:-}" ] || export "${2?}"
	kmond_start "$WORK/kmond.yaml" -v
	[ -z "${2:-}" ] || unset "${2%%=*}"
	sleep 1
	for ((i = 0; i < RUNS; i++)); do
		curl -sk --http1.1 -o /dev/null "https://127.0.0.1:$TLS/" ||
			fail "curl failed"
		sleep "$GAP"
	done
	sleep 1.2 # two intervals
	kmond_stop
	python3 - "$WORK/stdout" "$WORK/err" "$1" "$TLS" "$RUNS" <<'PY'
import collections, json, re, statistics, sys
out, err, name, port, runs = sys.argv[1:4] + [int(a) for a in sys.argv[4:]]
recs = list(map(json.loads, open(out)))
stats = [r["collectors"]["tcp"] for r in recs if r["kind"] == "stats"][-1]
by_pid = collections.defaultdict(list)
for r in recs:
    if r["kind"] == "tcp" and r["side"] == "client" and r["rport"] == port:
        by_pid[r["pid"]].append((r["protocol"], r.get("tls")))
whole = sum(all(k == ("http", True) for k in v) for v in by_pid.values())
part = sum(any(t for _, t in v) and not all(k == ("http", True) for k in v)
           for v in by_pid.values())
delays = [int(m) for m in re.findall(r"attached (\d+) us after it started",
                                     open(err).read())]
med = statistics.median(delays) if delays else 0
print(f"{name}: {runs} runs, read whole {whole} ({100 * whole / runs:.0f}%), "
      f"in part {part}, not read {len(by_pid) - whole - part}; "
      f"attached at start {stats['tls_attached_at_start']}, gone first "
      f"{stats['tls_gone_unattached']}; exec to attached median {med:.0f} "
      f"us, max {max(delays, default=0)} us")
PY
}

one_way multi
one_way perf KMOND_PROBE_FAIL_LOAD=uprobe_multi
