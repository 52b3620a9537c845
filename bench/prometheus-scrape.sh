#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The prometheus sink's cost with about 10,000 series: kmond CPU per
# scrape (its HTTP thread's run time from /proc/PID/task/TID/schedstat,
# ns; plain, and with gzip as Prometheus asks for it), and its main
# thread's CPU per interval while it keeps them (the
# rendering of the text at each interval included), then the sink's own
# ingest and render of 10,000 series measured alone (bench/prom_render_bench.c).
# Target: a scrape in under 20 ms of kmond CPU.
#   bench/prometheus-scrape.sh [ROUNDS] [SCRAPES]   (default 10, 100)
# Not a test: run it by hand, as root, on a quiet machine if you can.
# Series: NAMES copies of a helper (symlinks: the process name is the
# link's) each calling SYSCALLS syscall numbers no syscall has, with no
# service configured, so each name x number is one kmon_syscalls_total
# series (plus the helper's own start-up syscalls).
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${1:-10}
SCRAPES=${2:-100}
NAMES=${NAMES:-200}
SYSCALLS=${SYSCALLS:-40}

make -s build/kmond build/bench/prom_series_load build/bench/prom_render_bench >/dev/null
bench_init /tmp/kmond-prom-bench.XXXXXX
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port/metrics
cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
collectors:
  syscall: { enabled: true }
exporters:
  - { type: prometheus, listen: "127.0.0.1:$port", max_series: 100000 }
YAML
kmond_start "$WORK/kmond.yaml"

for ((i = 0; i < NAMES; i++)); do
	ln -s "$PWD/build/bench/prom_series_load" "$WORK/$(printf 'kpb%04d' $i)"
done
for ((i = 0; i < NAMES; i++)); do
	"$WORK/$(printf 'kpb%04d' $i)" 500 "$SYSCALLS"
	# a batch per interval: the kernel's table holds 16384 keys
	((i % 50 == 49)) && sleep 1.1
done
sleep 2.5
series() { curl -sf "$url" | awk '$1 ~ /^kmon_series[{ ]/ { print $2 }'; }
n=$(series)
bytes=$(curl -sf "$url" | wc -c)
echo "series: $n, scrape: $bytes bytes, $(nproc) cores (shared: figures are noisy)"

# run time (ns) of one thread of kmond
run_ns() { awk '{ print $1 }' "/proc/$KMOND_PID/task/$1/schedstat"; }
http_tid=$(ls "/proc/$KMOND_PID/task" | grep -v "^$KMOND_PID\$" | head -1)
[ -n "$http_tid" ] || fail "no HTTP thread in kmond"
echo "HTTP thread: $http_tid ($(cat /proc/$KMOND_PID/task/$http_tid/comm))"

per_scrape=() per_interval=()
for ((r = 0; r < ROUNDS; r++)); do
	# scrapes, back to back, one connection each (as Prometheus's would
	# be after an idle timeout)
	h0=$(run_ns $http_tid)
	python3 - "$url" "$SCRAPES" <<'PY'
import sys, urllib.request
for _ in range(int(sys.argv[2])):
    body = urllib.request.urlopen(sys.argv[1]).read()
    assert b"kmon_syscalls_total" in body
PY
	h1=$(run_ns $http_tid)
	per_scrape+=($(((h1 - h0) / SCRAPES / 1000)))
	# then 3 idle intervals: the main thread's cost of keeping the series
	m0=$(run_ns $KMOND_PID)
	sleep 3
	m1=$(run_ns $KMOND_PID)
	per_interval+=($(((m1 - m0) / 3 / 1000)))
done
# as Prometheus scrapes: once per interval, asking for gzip, so each
# scrape compresses that interval's text (once; more scrapes share it)
gz_per_scrape=()
for ((r = 0; r < ROUNDS; r++)); do
	sleep 1.05
	h0=$(run_ns $http_tid)
	curl -sf -H 'Accept-Encoding: gzip' -o "$WORK/gz" "$url"
	h1=$(run_ns $http_tid)
	gz_per_scrape+=($(((h1 - h0) / 1000)))
done
gz_bytes=$(wc -c <"$WORK/gz")
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
s=$(median "${per_scrape[@]}")
i=$(median "${per_interval[@]}")
echo "per scrape (HTTP thread), us: ${per_scrape[*]}"
echo "per interval (main thread), us: ${per_interval[*]}"
echo "per gzip scrape, one per interval ($gz_bytes bytes), us: ${gz_per_scrape[*]}"
printf 'median: %.3f ms of kmond CPU per gzip scrape (compression included)\n' \
	"$(echo "$(median "${gz_per_scrape[@]}") / 1000" | bc -l)"
printf 'median: %.3f ms of kmond CPU per scrape of %s series (target < 20 ms); main thread %.3f ms per 1 s interval\n' \
	"$(echo "$s / 1000" | bc -l)" "$n" "$(echo "$i / 1000" | bc -l)"
kmond_stop

# The sink's share of the main thread alone: ingest and render of
# 250 x 40 series, in a program linked with kmond's library.
build/bench/prom_render_bench 250 40
