#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# nginx (an event-loop server: several connections per worker, sendfile)
# under curl and wrk, named by its port: one tcp record per request in
# nginx's access log, and their request and response bytes add up to the
# log's exactly.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

PORT=$(test_port)
N=25
start_nginx $PORT 2

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: web
    match: { port: $PORT }   # master and workers: they share the listener
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
if [ -n "${KMOND_PROBE_DENY:-}" ]; then # run by tcp_fallback.sh
	grep -q "collector tcp: running (.*raw_tp" "$WORK/kmond.err" ||
		fail "the syscall fallback was not chosen"
fi
log=$WORK/nginx/logs/access.log
before=$(wc -l <"$log")

# N requests on one keep-alive connection, over IPv6, then a load.
urls=()
for ((i = 0; i < N; i++)); do urls+=("http://[::1]:$PORT/"); done
curl -s "${urls[@]}" >/dev/null || fail "curl failed"
wrk -t1 -c4 -d2s "http://127.0.0.1:$PORT/" >"$WORK/wrk.out" || fail "wrk failed"
grep -E "requests in" "$WORK/wrk.out"
sleep 1.2 # two intervals
stop_kmond

out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"
tail -n +$((before + 1)) "$log" >"$WORK/measured.log"
# A request whose client left before any answer (499, 0 bytes) has no
# response: it is no request/response pair.
answered=$(awk '$2 > 0' "$WORK/measured.log" | wc -l)
[ "$answered" -gt $((N + 100)) ] || fail "only $answered requests in the log"
got=$($RECORDS "$out" --kind tcp --where service=web --count)
expect_eq "tcp records of nginx (= answered requests in its log)" "$got" "$answered"
v6=$($RECORDS "$out" --kind tcp --where service=web --where family=ipv6 --count)
expect_eq "records of the IPv6 keep-alive connection" "$v6" $N
want=$(awk '$2 > 0 { s += $3 } END { print s }' "$WORK/measured.log")
got=$($RECORDS "$out" --kind tcp --where service=web --sum req_bytes)
expect_eq "request bytes" "$got" "$want"
want=$(awk '$2 > 0 { s += $2 } END { print s }' "$WORK/measured.log")
got=$($RECORDS "$out" --kind tcp --where service=web --sum resp_bytes)
expect_eq "response bytes" "$got" "$want"
got=$($RECORDS "$out" --kind topology --where dst=web --sum requests)
expect_eq "requests on the topology edges to nginx" "$got" "$answered"
# kmond's own count: every request seen, none lost (ringbuf, maps)
read -r events lost < <(python3 -c '
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if "\"stats\"" in l][-1]
t = last["collectors"]["tcp"]
print(t["events"], t["lost"])' "$out")
expect_eq "requests in kmond's stats" "$events" "$answered"
expect_eq "events lost" "$lost" 0
pids=$($RECORDS "$out" --kind tcp --where service=web --values pid | sort -u | wc -l)
echo "ok: records from $pids nginx worker(s)"
