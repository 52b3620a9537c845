#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The prometheus exporter, scraped every second by a real Prometheus
# (one server for every check, to keep the test short):
# - N getppid calls of a selected process and M requests to nginx read
#   back through PromQL exactly, the latency histogram's _count and the
#   load records' arrivals and completions too;
# - promtool check metrics finds nothing to say about the output;
# - bad requests get 404, 405, 431; HEAD has no body;
# - clients that connect and never read do not stall kmond or scrapes;
# - counters never reset across a SIGHUP that adds a service and two that
#   switch the syscall collector off and on (the sink is kept), nor
#   across a changed listen address; a taken port fails a reload (the old
#   listener serves on) and the start.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/prometheus.sh"

P=$(test_port 4)
WEB=$P KMON=$((P + 1)) PROM=$((P + 2)) KMON2=$((P + 3))
N=12345 M=60 K=321 N2=1000
METRICS=http://127.0.0.1:$KMON/metrics
# Names of our own: other tests on this machine run kmt_getppid too.
GET=kp_get_$$ OTHER=kp_oth_$$
cp "$BUILD/tests/kmt_getppid" "$WORK/$GET"
cp "$BUILD/tests/kmt_getppid" "$WORK/$OTHER"
start_nginx $WEB 2

# write_config SYSCALL_ON WITH_OTHER LISTEN [MAX_SERIES [EXPIRE]]
write_config() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: probe-svc
    match: { comm: $GET }
  - name: web
    match: { port: $WEB }
$([ "$2" = yes ] && printf '  - name: other\n    match: { comm: %s }' $OTHER)
collectors:
  syscall: { enabled: $1 }
  tcp: { enabled: true, requests: none }   # the histogram counts them all
exporters:
  - { type: file, path: $WORK/records.json }
  - { type: prometheus, listen: "$3", max_series: ${4:-50000}, expire: ${5:-10m} }
YAML
}
# reload: SIGHUP, then waits for the Nth "reloaded" (or refusal)
reload() {
	kill -HUP $KMOND_PID
	wait_for_log_count "$1" "$2" || fail "no '$1' after SIGHUP"
}

write_config true no "127.0.0.1:$KMON"
start_kmond "$WORK/kmond.yaml"
start_prometheus $PROM "127.0.0.1:$KMON"

# --- exact counts through PromQL ---
"$WORK/$GET" $N
log=$WORK/nginx/logs/access.log
before=$(wc -l <"$log")
urls=()
for ((i = 0; i < M; i++)); do urls+=("http://127.0.0.1:$WEB/"); done
curl -s "${urls[@]}" >/dev/null || fail "curl failed"
answered=$(tail -n +$((before + 1)) "$log" | awk '$2 > 0' | wc -l)
expect_eq "requests in nginx's log" "$answered" $M
prom_wait_eq 'kmon_syscalls_total{service="probe-svc",syscall="getppid"}' $N
echo "ok: PromQL getppid = $N"
prom_wait_eq 'sum(kmon_requests_total{service="web"})' $M
echo "ok: PromQL requests = $M"
prom_wait_eq 'sum(kmon_request_duration_seconds_count{service="web"})' $M
echo "ok: PromQL request histogram count = $M"
prom_wait_eq 'sum(kmon_request_duration_seconds_bucket{service="web",le="+Inf"})' $M
prom_wait_eq 'sum(kmon_edge_requests_total{dst="web"})' $M
prom_wait_eq 'sum(kmon_load_arrivals_total{service="web",side="server"})' $M
prom_wait_eq 'sum(kmon_load_completions_total{service="web",side="server"})' $M
echo "ok: PromQL load arrivals, completions = $M"
sleep 1.5 # no more than that either
expect_eq "getppid a while later" "$(prom_query 'kmon_syscalls_total{service="probe-svc",syscall="getppid"}')" $N
expect_eq "requests a while later" "$(prom_query 'sum(kmon_requests_total{service="web"})')" $M
expect_eq "kmond's stats through Prometheus: reloads" "$(prom_query 'kmon_reloads_total')" 0
got=$(prom_query 'kmon_resident_memory_bytes > 1000000')
[ "$got" != none ] || fail "no resident memory figure"

# libmicrohttpd's thread came after kmond dropped its capabilities
http_tid=$(ls /proc/$KMOND_PID/task | grep -v "^$KMOND_PID\$" | head -1)
[ -n "$http_tid" ] || fail "no HTTP thread"
expect_eq "the HTTP thread's capabilities (as the main thread's)" \
	"$(grep CapEff /proc/$KMOND_PID/task/$http_tid/status)" \
	"$(grep CapEff /proc/$KMOND_PID/status)"

# --- promtool ---
curl -sf "$METRICS" >"$WORK/metrics.txt" || fail "scrape failed"
lint=$(promtool check metrics <"$WORK/metrics.txt" 2>&1) || fail "promtool: $lint"
expect_eq "promtool check metrics says" "$lint" ""
grep -q '^kmon_request_duration_seconds_bucket{.*le="0.001015807"}' "$WORK/metrics.txt" ||
	fail "no 1 ms bucket"

# --- bad requests ---
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
expect_eq "unknown path" "$(code http://127.0.0.1:$KMON/)" 404
expect_eq "unknown path /metricsx" "$(code http://127.0.0.1:$KMON/metricsx)" 404
expect_eq "POST" "$(code -X POST -d x=1 "$METRICS")" 405
curl -s -D "$WORK/headers" -o /dev/null -X DELETE "$METRICS"
grep -qi '^Allow: GET, HEAD' "$WORK/headers" || fail "405 without Allow"
big=$(head -c 65536 /dev/zero | tr '\0' a)
expect_eq "64 KiB header" "$(code -H "X-Big: $big" "$METRICS")" 431
expect_eq "HEAD" "$(code -I "$METRICS")" 200
grep -qi '^Content-Type: text/plain; version=0.0.4' "$WORK/body" || fail "HEAD: no content type"
grep -q kmon_ "$WORK/body" && fail "HEAD returned a body"
expect_eq "GET after all that" "$(code "$METRICS")" 200
curl -sf -D "$WORK/gz.headers" -H 'Accept-Encoding: gzip' "$METRICS" |
	gunzip >"$WORK/gz.txt" || fail "no gzip answer to Accept-Encoding: gzip"
grep -qi '^Content-Encoding: gzip' "$WORK/gz.headers" || fail "no Content-Encoding: gzip"
grep -q '^kmon_syscalls_total{' "$WORK/gz.txt" || fail "gzip: not the metrics"
lint=$(promtool check metrics <"$WORK/gz.txt" 2>&1) || fail "promtool (gzip): $lint"
echo "ok: gzip on request ($(wc -c <"$WORK/gz.txt") bytes of text)"
reused=$(curl -sv -o /dev/null -o /dev/null "$METRICS" "$METRICS" 2>&1 |
	grep -c "Re-using existing connection")
expect_eq "scrapes on one kept-alive connection" "$reused" 1

# --- clients that never read ---
stats_before=$(grep -c '"kind":"stats"' "$WORK/records.json")
python3 - "$KMON" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for req in (b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", b"", b"GET /metr"):
    for _ in range(3):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.connect(("127.0.0.1", port))
        s.sendall(req)
        socks.append(s)
time.sleep(4) # never reads
PY
stuck=$!
STARTED_PIDS+=($stuck)
sleep 0.5
start_ns=$(date +%s%N)
expect_eq "a scrape beside 9 stuck clients" "$(code --max-time 2 "$METRICS")" 200
echo "ok: answered in $((($(date +%s%N) - start_ns) / 1000000)) ms"
"$WORK/$GET" $N2
N=$((N + N2))
prom_wait_eq 'kmon_syscalls_total{service="probe-svc",syscall="getppid"}' $N
wait $stuck
stats_after=$(grep -c '"kind":"stats"' "$WORK/records.json")
[ $((stats_after - stats_before)) -ge 7 ] ||
	fail "only $((stats_after - stats_before)) intervals in 4 s of stuck clients"
echo "ok: $((stats_after - stats_before)) intervals went by while they were stuck"
expect_eq "Prometheus's scrapes all succeeded" "$(prom_query 'min_over_time(up[20s])')" 1

# --- reloads: counters go on ---
write_config true yes "127.0.0.1:$KMON"
reload "reloaded" 1
"$WORK/$OTHER" $K
prom_wait_eq 'kmon_syscalls_total{service="other",syscall="getppid"}' $K
write_config false yes "127.0.0.1:$KMON"
reload "collector syscall: stopped" 1
sleep 1.5
write_config true yes "127.0.0.1:$KMON"
reload "reloaded" 3
wait_for_log_count "collector syscall: running" 2 || fail "syscall did not start again"
"$WORK/$GET" $N2
N=$((N + N2))
prom_wait_eq 'kmon_syscalls_total{service="probe-svc",syscall="getppid"}' $N
expect_eq "the prometheus sink was kept by 3 reloads" \
	"$(grep -c 'prometheus sink: metrics on' "$WORK/kmond.err")" 1
prom_wait_eq 'kmon_reloads_total' 3
sleep 1
# resets() drops the names: one family at a time
curl -sf "$METRICS" >"$WORK/metrics.txt" || fail "scrape failed"
families=$(awk '$1 == "#" && $2 == "TYPE" && $4 == "counter" { print $3 }
	$1 == "#" && $2 == "TYPE" && $4 == "histogram" { print $3 "_count"; print $3 "_bucket" }' "$WORK/metrics.txt")
for f in $families; do
	got=$(prom_query "sum(resets($f[5m]))")
	[ "$got" = 0 ] || fail "$f went back $got times"
done
echo "ok: no counter went back:" $families
expect_eq "requests after the reloads" "$(prom_query 'sum(kmon_requests_total{service="web"})')" $M

# a changed setting on the same address: the new sink takes the old
# one's listener and counters
write_config true yes "127.0.0.1:$KMON" 40000
reload "reloaded" 4
expect_eq "a new sink for max_series" \
	"$(grep -c 'prometheus sink: metrics on' "$WORK/kmond.err")" 2
sleep 1.2
grep -q "^kmon_syscalls_total{.*service=\"probe-svc\",syscall=\"getppid\"} $N\$" \
	<(curl -sf "$METRICS") || fail "max_series changed: not the same counters"
echo "ok: a changed max_series keeps the address and the counters"

# a new address (IPv6): opened before the old one closes, same counters
write_config true yes "[::1]:$KMON2"
reload "reloaded" 5
sleep 1.2
grep -q "^kmon_syscalls_total{.*service=\"probe-svc\",syscall=\"getppid\"} $N\$" \
	<(curl -sf "http://[::1]:$KMON2/metrics") || fail "new address: not the same counters"
echo "ok: the new address serves the same counters"
curl -s -o /dev/null "$METRICS" && fail "the old address still answers"
# a taken port (Prometheus's): the reload is refused, the listener stays
write_config true yes "127.0.0.1:$PROM"
reload "reload refused" 1
grep -q "cannot listen on 127.0.0.1:$PROM: Address already in use" "$WORK/kmond.err" ||
	fail "no reason for the refused reload"
expect_eq "old listener after a refused reload" \
	"$(code "http://[::1]:$KMON2/metrics")" 200

# expire and max_series: quiet series go, new ones past the bound are
# refused and counted, kmond's own stay
write_config true yes "[::1]:$KMON2" 5 2s
reload "reloaded" 6
sleep 3.5
curl -sf "http://[::1]:$KMON2/metrics" >"$WORK/expired.txt"
grep -q "service=\"other\"" "$WORK/expired.txt" && fail "a quiet service's series did not expire"
grep -q '^kmon_records_total' "$WORK/expired.txt" || fail "kmond's own series expired"
echo "ok: series quiet for 2 s are gone, kmond's own stay"
"$WORK/$GET" 10
sleep 1
curl -sf "http://[::1]:$KMON2/metrics" >"$WORK/bounded.txt"
limited=$(grep -v '^#' "$WORK/bounded.txt" | grep -cv '^kmon_\(events\|lost_events\|records\|reload\|collector_up\|cpu\|resident\|series\)')
expect_eq "series (but kmond's own) under max_series 5" "$limited" 5
dropped=$(awk '$1 ~ /^kmon_series_dropped_total/ { print $2 }' "$WORK/bounded.txt")
[ "${dropped:-0}" -gt 0 ] || fail "no refused series counted"
echo "ok: max_series 5: $limited series, $dropped refused updates counted"
stop_kmond

# a taken port at start: a clear error, exit 1
write_config true yes "127.0.0.1:$PROM"
timeout 10 "$KMOND" -c "$WORK/kmond.yaml" >/dev/null 2>"$WORK/taken.err"
expect_eq "exit code with a taken port" $? 1
grep -q "cannot listen on 127.0.0.1:$PROM: Address already in use" "$WORK/taken.err" ||
	fail "no reason: $(cat "$WORK/taken.err")"
echo "ok: $(grep listen "$WORK/taken.err")"
