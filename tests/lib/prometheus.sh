# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A real Prometheus server (Debian's) for the tests, on loopback, its
# storage under $WORK, scraping one target every second (sourced after
# kmond.sh, which kills it by pid at the end).
#   start_prometheus PORT TARGET   sets PROM_URL, waits until ready
#   prom_query EXPR                prints the value of a one-sample result
#                                  ("none" when empty), instant query now
#   prom_wait_eq EXPR WANT [SEC]   waits until prom_query EXPR prints WANT

PROMETHEUS=$(command -v prometheus || echo /usr/bin/prometheus)

start_prometheus() {
	local port=$1 target=$2 i
	mkdir -p "$WORK/prometheus"
	cat >"$WORK/prometheus.yml" <<YAML
global: { scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s }
scrape_configs:
  - job_name: kmond
    static_configs: [ { targets: ["$target"] } ]
YAML
	"$PROMETHEUS" --config.file="$WORK/prometheus.yml" \
		--storage.tsdb.path="$WORK/prometheus" \
		--web.listen-address="127.0.0.1:$port" \
		--log.level=warn >"$WORK/prometheus.log" 2>&1 &
	PROM_PID=$!
	STARTED_PIDS+=($PROM_PID)
	PROM_URL="http://127.0.0.1:$port"
	for ((i = 0; i < 100; i++)); do
		curl -sf "$PROM_URL/-/ready" >/dev/null && return 0
		sleep 0.1
	done
	fail "prometheus did not start: $(tail -3 "$WORK/prometheus.log")"
}

prom_query() {
	curl -sf --get "$PROM_URL/api/v1/query" --data-urlencode "query=$1" |
		python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
if not r:
    print("none")
elif len(r) > 1:
    print("several: %d series" % len(r))
else:
    v = r[0]["value"][1]
    print(v[:-2] if v.endswith(".0") else v)'
}

prom_wait_eq() {
	local got i
	for ((i = 0; i < ${3:-20} * 4; i++)); do
		got=$(prom_query "$1")
		[ "$got" = "$2" ] && return 0
		sleep 0.25
	done
	fail "prometheus: $1 = '$got', want '$2'"
}
