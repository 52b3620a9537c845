#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Soak: kmond on the default config (every collector, every process) under
# a steady mixed load for SOAK_SECONDS (default 600), sampling its RSS, open
# fds and CPU once a minute. All three must stay flat: growth means a leak.
#   bench/soak.sh [SECONDS] [SAMPLE_SECONDS]    (as root, after make)
# Load, all on loopback and rate-limited so the machine stays responsive:
# HTTP requests (persistent and short connections) to a small server,
# process churn (fork + exec), sleeps (off-CPU), direct writes (block I/O),
# and SYNs to a closed port (TCP drops).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TOTAL=${1:-${SOAK_SECONDS:-600}}
STEP=${2:-60}
work=$(mktemp -d /var/tmp/kmond-soak.XXXXXX)
pids=()
kmond_pid=
cleanup() {
	local p
	for p in "${pids[@]}" $kmond_pid; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}" $kmond_pid; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

install -m 0644 configs/kmond.yaml "$work/kmond.yaml"
build/kmond -c "$work/kmond.yaml" >"$work/out.json" 2>"$work/kmond.err" &
kmond_pid=$!
sleep 2
kill -0 "$kmond_pid" || { cat "$work/kmond.err"; exit 1; }

# An HTTP server and two clients: ~200 requests/s on one persistent
# connection, ~20 short connections/s.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server -b 127.0.0.1 "$port" -d "$work" >/dev/null 2>&1 &
pids+=($!)
sleep 0.5
python3 - "$port" <<'PY' &
import http.client, sys, time
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port)
while True:
    c.request("GET", "/kmond.yaml", headers={"Connection": "keep-alive"})
    c.getresponse().read()
    time.sleep(0.005)
PY
pids+=($!)
(while sleep 0.05; do python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/kmond.yaml').read()" >/dev/null 2>&1 || true; done) &
pids+=($!)
(while sleep 0.02; do /bin/true; done) &
pids+=($!)
(while sleep 1; do dd if=/dev/zero of="$work/dd" bs=1M count=4 oflag=direct status=none; done) &
pids+=($!)
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(while sleep 0.2; do timeout 0.1 bash -c "echo > /dev/tcp/127.0.0.1/$closed" 2>/dev/null || true; done) &
pids+=($!)

clk=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$kmond_pid/stat"; }
printf '%6s %10s %10s %5s %7s\n' time rss_kib hwm_kib fds cpu%
last=$(cpu_ticks)
for ((t = STEP; t <= SECONDS_TOTAL; t += STEP)); do
	sleep "$STEP"
	kill -0 "$kmond_pid" || { echo "kmond died"; tail "$work/kmond.err"; exit 1; }
	now=$(cpu_ticks)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$kmond_pid/status")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$kmond_pid/status")
	fds=$(ls "/proc/$kmond_pid/fd" | wc -l)
	awk -v t="${t}s" -v rss="$rss" -v hwm="$hwm" -v fds="$fds" \
		-v cpu="$(((now - last) * 100))" -v div="$((clk * STEP))" \
		'BEGIN { printf "%6s %10s %10s %5s %7.2f\n", t, rss, hwm, fds, cpu / div }'
	last=$now
done
# Stopped first: its last line must be whole before it is read.
kill -TERM "$kmond_pid"
wait "$kmond_pid" || echo "kmond exited with $?"
kmond_pid=
echo "records by kind:"
python3 -c 'import collections, json, sys
c = collections.Counter(json.loads(l)["kind"] for l in open(sys.argv[1]))
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))
s = [json.loads(l) for l in open(sys.argv[1]) if "\"kind\":\"stats\"" in l][-1]
print("last stats: lost", s["lost"], "events", s["events"])' "$work/out.json"
