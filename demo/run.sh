#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make demo`: what kmond sees on a microservice application. Starts the
# demo shop (demo/app: nginx, ten Python tiers, Redis, PostgreSQL,
# memcached, a Kafka broker checkout publishes to; each tier a container of its own, podman + runc, in a pod's
# network namespace on one bridge, annotated as a Kubernetes runtime
# annotates a pod), kmond with every collector of the shipped config
# (configs/kmond.yaml) and the shop's services, Prometheus scraping
# kmond, the Kafka-protocol broker and the consumers (kmon-topo,
# kmon-trace); drives an open-loop user load (demo/loadgen.py) with one
# tier slowed by its fault switch; writes the pictures and an index page
# into one folder (demo/report.py), then stops and removes everything it
# started. Run as root from the top of the tree, after make.
#   demo/run.sh [OUT]          OUT: the folder (default build/demo)
# Environment: DEMO_DURATION (seconds of load, default 180), DEMO_RATE
# (user actions a second, default 15), FAULT_TIER (default shipping),
# FAULT_MS (its delay a request, default 25), DEMO_IDLE_FRAMES (the
# kernel functions of the slowed tier's waits for its next request, left
# out of its flame graph: default sk_wait_data, a keep-alive connection's
# thread in recv, and do_sys_poll, the accept loop; right for a tier that
# calls no other, as shipping), BUILD (default build).
DEMO=$(cd "$(dirname "$0")" && pwd)
DEMO_OUT=$(realpath -m "${1:-${BUILD:-build}/demo}")
cd "$DEMO/.."
source "$DEMO/../tests/lib/kmond.sh"
source "$DEMO/../tests/lib/container.sh"
source "$DEMO/../tests/lib/netns.sh"
source "$DEMO/../tests/lib/kafka.sh"
source "$DEMO/../tests/lib/prometheus.sh"
source "$DEMO/shop.sh"
trap 'container_cleanup; netns_cleanup' EXIT

DURATION=${DEMO_DURATION:-180}
RATE=${DEMO_RATE:-15}
step() { echo "demo: $*"; }

container_ready
KMON_TOPO=$BUILD/kmon-topo
KMON_TRACE=$BUILD/kmon-trace
KMON_VIEW=$BUILD/kmon-view
for bin in "$KMOND" "$KMON_TOPO" "$KMON_TRACE" "$KMON_VIEW" "$KAFKA_BROKER"; do
	[ -x "$bin" ] || fail "$bin is missing: make all $BUILD/tests/kafka_broker"
done
T0=$(date +%s)

step "the shop: ${#SHOP_TIERS[@]} tiers, each in its own container and pod"
shop_start

step "kmond (every collector), the broker, Prometheus, kmon-topo, kmon-trace"
start_broker -p 0
broker_cmd "topic kmon.topology 1"
broker_cmd "topic kmon.tcp 1"
PROM_PORT=$(test_port 2)
{
	shop_kmond_config
	cat <<YAML
exporters:
  - { type: file, path: "-" }
  - { type: kafka, brokers: "$BROKERS", topic_prefix: "kmon." }
  - { type: prometheus, listen: "127.0.0.1:$((PROM_PORT + 1))" }
YAML
} >"$WORK/kmond.yaml"
start_kmond "$WORK/kmond.yaml"
start_prometheus $PROM_PORT 127.0.0.1:$((PROM_PORT + 1))
"$KMON_TOPO" -b "$BROKERS" -g demo-topo --interval 2s --dot "$WORK/topology.dot" \
	--json "$WORK/topology.json" 2>"$WORK/topo.err" &
TOPO_PID=$!
STARTED_PIDS+=($TOPO_PID)
"$KMON_TRACE" -b "$BROKERS" -g demo-trace --quiet 3s -o "$WORK/traces.otlp" \
	2>"$WORK/trace.err" &
TRACE_PID=$!
STARTED_PIDS+=($TRACE_PID)

step "load: $RATE user actions a second for ${DURATION}s, $FAULT_TIER slowed by ${FAULT_MS}ms"
shop_load "$RATE" "$DURATION" "$WORK/requests.jsonl" >"$WORK/loadgen.json"
cat "$WORK/loadgen.json"
sleep 2 # the last interval's records
curl -sf --get "$PROM_URL/api/v1/query" --data-urlencode \
	'query=sum by (service) (increase(kmon_requests_total{side="server"}[10m]))' \
	>"$WORK/prometheus.json" || fail "Prometheus did not answer"
stop_kmond
# read once kmond stopped: kcat's reading is not the shop's
shop_orders "$WORK/orders.txt"
# the consumers have read what kmond delivered when it stopped
sleep 4
kill -TERM $TOPO_PID $TRACE_PID
wait $TOPO_PID || fail "kmon-topo: $(tail -3 "$WORK/topo.err")"
wait $TRACE_PID || fail "kmon-trace: $(tail -3 "$WORK/trace.err")"

step "pictures into $DEMO_OUT"
rm -rf "$DEMO_OUT" && mkdir -p "$DEMO_OUT" || fail "cannot make $DEMO_OUT"
cp "$WORK/out.json" "$DEMO_OUT/records.json"
shop_logs "$DEMO_OUT/logs"
cp "$WORK/requests.jsonl" "$WORK/loadgen.json" "$WORK/orders.txt" "$WORK/topology.dot" \
	"$WORK/traces.otlp" "$WORK/prometheus.json" "$WORK/kmond.yaml" "$DEMO_OUT/"
tail -1 "$WORK/topology.json" >"$DEMO_OUT/topology.json"
tail -1 "$WORK/trace.err" >"$DEMO_OUT/trace_stats.json"
dot -Tsvg "$WORK/topology.dot" -o "$DEMO_OUT/topology.svg" || fail "dot failed"
# the waits for work out: what delays the requests is what is left
without=()
for frame in ${DEMO_IDLE_FRAMES:-sk_wait_data do_sys_poll}; do
	without+=(--without "$frame")
done
flame() { "$KMON_VIEW" flame -i "$WORK/out.json" --service "$FAULT_TIER" "$@" || fail "kmon-view flame"; }
flame "${without[@]}" -o "$DEMO_OUT/offcpu-$FAULT_TIER.svg" \
	--title "off-CPU time of $FAULT_TIER (slowed ${FAULT_MS}ms a request), without ${without[*]}"
flame "${without[@]}" --folded -o "$DEMO_OUT/offcpu-$FAULT_TIER.folded"
flame --folded -o "$DEMO_OUT/offcpu-$FAULT_TIER-all.folded"
"$KMON_VIEW" load -i "$WORK/out.json" -o "$DEMO_OUT/load.svg" || fail "kmon-view load"
python3 "$DEMO/report.py" "$DEMO_OUT" --fault-tier "$FAULT_TIER" --fault-ms "$FAULT_MS" \
	--seconds $(($(date +%s) - T0)) || fail "report"
step "done: $DEMO_OUT/index.html"
