#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# HTTP outcomes (docs/design/outcomes.md), both ends monitored: nginx
# answers some routes 200, some 404, 500 or 503 (its return directive),
# curl (keep-alive and new connections, GET, POST, DELETE, queries) and
# wrk (a Lua script, an exact count of requests on one connection) call
# it from a caller kmond selects. Every request's status, error (server
# side 5xx, client side 4xx and 5xx), method and route (numbers, UUIDs,
# hex ids folded to {id}, the query dropped; none for a path longer
# than the head kmond captures) is exact against nginx's
# access log on both sides, and the topology and load records' counts by
# outcome are the sums over the records. Then a URL storm (random paths
# from an unmonitored wrk) stays within the per-service route bound.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/caller.sh"

need_protocols
CHECK="python3 $(dirname "$0")/../lib/outcome_check.py"
ROUTE_BOUND=100 # collectors.tcp.routes: routes per service before "other"
REQ_HEAD=$(awk '$2 == "OUTCOME_REQ_HEAD" { print $3 }' bpf/tcp/outcome.h)
WRK_REQUESTS=30
STORM=3000 # requests of the URL storm, each to a path of its own
PORT=$(test_port)
NGINX_LOCATIONS='
	location = /health { return 200 "ok\n"; }
	location ~ ^/users/[0-9]+$ { return 200 "user\n"; }
	location ~ ^/api/v1/users/[0-9]+$ { return 200 "user\n"; }
	location /orders/ { return 404; }
	location /pay/ { return 500; }
	location /blobs/ { return 503; }
	location /reports/ { return 200 "report\n"; }
	location /scan/ { return 404; }'
start_nginx $PORT 2
start_caller

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { port: $PORT } }
  - { name: callers, match: { pid: $CALLER_PID } }
collectors:
  tcp: { enabled: true, routes: $ROUTE_BOUND }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # one interval: the caller is selected
log=$WORK/nginx/logs/access.log
before=$(wc -l <"$log")

# --- the known mix ---
url=http://127.0.0.1:$PORT
uuids=(3f2a8c1e-9b4d-4e6f-a1c2-0d9e8f7a6b5c 00000000-0000-4000-8000-000000000001
	c0ffee00-1234-4abc-9def-0123456789ab 7d444840-9dc0-11d1-b245-5ffdce74fad2
	e3b0c442-98fc-4c14-9afb-f4c8996fb924)
# one keep-alive connection each: 7 users and a versioned API, 5 orders
# (in_caller evals its line: quoted for a second time where a ? could glob)
in_caller users curl -s "$url/users/"{101..107} "'$url/api/v1/users/7?fields=name'"
in_caller orders curl -s "${uuids[@]/#/$url/orders/}"
# a connection each: 3 POSTs that fail, 2 DELETEs of hex ids, 2 health checks
for i in 1 2 3; do in_caller pay$i curl -s -d amount=$i "'$url/pay/$((i * 1000))?retry=$i'"; done
for h in 9f86d081884c7d659a2feaa0c55ad015 da39a3ee5e6b4b0d3255bfef95601890afd80709; do
	in_caller del$h curl -s -X DELETE "$url/blobs/$h"
done
for i in 1 2; do in_caller health$i curl -s "$url/health"; done
# a path longer than the request head kmond keeps: no route, never a cut one
long=$(printf 'quarterly-summary-of-the-regional-sales-for-the-board-%.0s' 1 2 3)
in_caller long curl -s "$url/reports/$long"
# wrk on one connection, exactly WRK_REQUESTS requests: its thread stops
# at that answer, before it writes the next request (wrk itself ends at
# -d, long after)
cat >"$WORK/mix.lua" <<LUA
local reqs, sent, answered
init = function() -- wrk.format's Host header is known from here on
	reqs = {
		wrk.format("GET", "/users/42"),
		wrk.format("GET", "/orders/0e4f7c2a-5b3d-4c1e-8f9a-112233445566?page=2"),
		wrk.format("POST", "/pay/77", nil, "amount=5"),
	}
	sent, answered = 0, 0
end
request = function()
	sent = sent + 1
	return reqs[(sent - 1) % #reqs + 1]
end
response = function()
	answered = answered + 1
	if answered == $WRK_REQUESTS then wrk.thread:stop() end
end
LUA
in_caller wrk wrk -t1 -c1 -d2s -s "$WORK/mix.lua" "$url"
sleep 1.1 # two intervals: the mix's records are out
mark=$(wc -l <"$WORK/out.json")
tail -n +$((before + 1)) "$log" >"$WORK/mix.log"

# --- the URL storm: random paths, none of them foldable ---
cat >"$WORK/storm.lua" <<'LUA'
local letters = "bcdfghjklmnpqrstvwxz"
local function word()
	local t = {}
	for i = 1, 7 do
		local k = math.random(#letters)
		t[i] = letters:sub(k, k)
	end
	return table.concat(t)
end
request = function()
	return wrk.format("GET", "/scan/" .. word() .. "/" .. word())
end
local answered = 0
response = function()
	answered = answered + 1
	if answered == STORM then wrk.thread:stop() end
end
LUA
sed -i "s/STORM/$STORM/" "$WORK/storm.lua"
wrk -t1 -c1 -d5s -s "$WORK/storm.lua" "$url" >"$WORK/storm.out" ||
	fail "wrk storm"
sleep 1.1 # two intervals
stop_kmond
out=$WORK/out.json
$RECORDS "$out" --check >/dev/null || fail "output is not JSON lines"

# The workload did what it says (nginx's own log).
mix=$(awk '{ print $1 }' "$WORK/mix.log" | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
expect_eq "statuses nginx answered (curl, then wrk)" "$mix" \
	"200:$((11 + WRK_REQUESTS / 3)) 404:$((5 + WRK_REQUESTS / 3)) 500:$((3 + WRK_REQUESTS / 3)) 503:2 "
storm=$(tail -n +$((before + $(wc -l <"$WORK/mix.log") + 1)) "$log" |
	awk '$5 ~ /^\/scan\// { print $5 }' | sort -u | wc -l)
[ "$storm" -gt $((STORM * 99 / 100)) ] || fail "the storm sent only $storm distinct paths"
echo "ok: the storm sent $storm distinct paths"

# Every check runs, each failure is named at the end: what fails where
# says more than the first failure alone.
failed=()
head -n "$mark" "$out" >"$WORK/mix.json"
for side in server client; do
	$CHECK http-expect "$WORK/mix.log" --side $side --req-head "$REQ_HEAD" \
		>"$WORK/$side.expect"
	$CHECK exact "$WORK/mix.json" --side $side --port $PORT \
		--expect "$WORK/$side.expect" || failed+=("$side-side outcomes")
done
$CHECK aggregates "$out" --service web --endpoint 127.0.0.1:$PORT ||
	failed+=("outcome counts of topology and load")
tail -n +$((mark + 1)) "$out" >"$WORK/storm.json"
$CHECK routes "$WORK/storm.json" --service web --bound $ROUTE_BOUND ||
	failed+=("routes of the storm")
other=$($RECORDS "$WORK/storm.json" --kind tcp --where service=web --where route=other --count)
if [ "$other" -ge $((storm - ROUTE_BOUND)) ]; then
	echo "ok: $other requests of the storm as route other"
else
	failed+=("only $other requests of $storm distinct paths as route other")
fi
[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
