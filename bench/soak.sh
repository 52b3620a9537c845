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
cd "$(dirname "$0")/.."
source bench/lib.sh
SECONDS_TOTAL=${1:-${SOAK_SECONDS:-600}}
STEP=${2:-60}
bench_init /var/tmp/kmond-soak.XXXXXX

install -m 0644 configs/kmond.yaml "$WORK/kmond.yaml"
kmond_start "$WORK/kmond.yaml" # the default config: records on stdout

# An HTTP server and two clients: ~200 requests/s on one persistent
# connection, ~20 short connections/s.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server -b 127.0.0.1 "$port" -d "$WORK" >/dev/null 2>&1 &
STARTED_PIDS+=($!)
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
STARTED_PIDS+=($!)
(while sleep 0.05; do python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/kmond.yaml').read()" >/dev/null 2>&1 || true; done) &
STARTED_PIDS+=($!)
(while sleep 0.02; do /bin/true; done) &
STARTED_PIDS+=($!)
(while sleep 1; do dd if=/dev/zero of="$WORK/dd" bs=1M count=4 oflag=direct status=none; done) &
STARTED_PIDS+=($!)
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(while sleep 0.2; do timeout 0.1 bash -c "echo > /dev/tcp/127.0.0.1/$closed" 2>/dev/null || true; done) &
STARTED_PIDS+=($!)

clk=$(getconf CLK_TCK)
printf '%6s %10s %10s %5s %7s\n' time rss_kib hwm_kib fds cpu%
last=$(kmond_ticks)
for ((t = STEP; t <= SECONDS_TOTAL; t += STEP)); do
	sleep "$STEP"
	kill -0 "$KMOND_PID" || fail "kmond died: $(tail -3 "$WORK/err")"
	now=$(kmond_ticks)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$KMOND_PID/status")
	hwm=$(kmond_hwm_kib)
	fds=$(ls "/proc/$KMOND_PID/fd" | wc -l)
	awk -v t="${t}s" -v rss="$rss" -v hwm="$hwm" -v fds="$fds" \
		-v cpu="$(((now - last) * 100))" -v div="$((clk * STEP))" \
		'BEGIN { printf "%6s %10s %10s %5s %7.2f\n", t, rss, hwm, fds, cpu / div }'
	last=$now
done
# Stopped first: its last line must be whole before it is read.
kmond_stop
echo "records by kind:"
python3 -c 'import collections, json, sys
c = collections.Counter(json.loads(l)["kind"] for l in open(sys.argv[1]))
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))
s = [json.loads(l) for l in open(sys.argv[1]) if "\"kind\":\"stats\"" in l][-1]
print("last stats: lost", s["lost"], "events", s["events"])' "$WORK/stdout"
