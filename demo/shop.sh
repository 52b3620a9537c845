# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The demo shop (demo/app) in containers, for demo/run.sh and
# bench/demo-overhead.sh: each tier a podman + runc container of the
# Debian image demo/image.sh makes (the Kafka broker: an image of
# build/tests/kafka_broker and its libraries, librdkafka's mock cluster),
# in a network namespace of its own (its
# pod's) on one bridge, annotated as a Kubernetes runtime annotates a pod
# (namespace boutique, pod TIER-...), so kmond's records carry them.
# Sourced after tests/lib/kmond.sh, container.sh and netns.sh; what it
# starts is removed by their cleanup.
#   shop_start             starts every tier, returns once each listens;
#                          FAULT_TIER waits FAULT_MS in each request
#   shop_load RATE SECONDS LOG   the load generator, from the client's
#                          namespace: its summary on stdout
#   shop_logs DIR          each tier's output into DIR/TIER.log, the spans
#                          of the shop's call tree into DIR/spans.jsonl
#   shop_orders FILE       the keys of the order events on the broker
#   shop_kmond_config      kmond's config but its exporters: the shipped
#                          collectors (configs/kmond.yaml), the tiers as
#                          services, the occupancy of the tiers behind
#                          frontend and checkout
SHOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHOP_IMAGE=localhost/kmon-demo:bookworm
SHOP_NAMESPACE=boutique
SHOP_NET=10.123.0
SHOP_TAG=$$
FAULT_TIER=${FAULT_TIER:-shipping}
FAULT_MS=${FAULT_MS:-25}
# tier, address, port, command: the call graph is in the tiers' code
SHOP_TIERS=(
	"gateway 2 80 nginx -c /etc/demo/nginx.conf"
	"frontend 3 8080 python3 /app/frontend.py"
	"catalogue 4 8080 python3 /app/catalogue.py"
	"cart 5 8080 python3 /app/cart.py"
	"checkout 6 8080 python3 /app/checkout.py"
	"currency 7 8080 python3 /app/currency.py"
	"recommendation 8 8080 python3 /app/recommendation.py"
	"shipping 9 8080 python3 /app/shipping.py"
	"payment 10 8080 python3 /app/payment.py"
	"ad 11 8080 python3 /app/ad.py"
	"email 12 8080 python3 /app/mailer.py"
	"redis 20 6379 redis-server --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --maxmemory 32mb --maxclients 900"
	"postgres 21 5432 /app/postgres.sh"
	"memcached 22 11211 memcached -u nobody -m 16 -l 0.0.0.0 -p 11211"
	"kafka 23 9092 /kafka_broker -a $SHOP_NET.23 -p 9092 -t orders"
)
SHOP_BROKER_IMAGE=localhost/kmon-demo-broker:$SHOP_TAG

shop_start() {
	local t name addr port cmd args peers= fault i image
	"$SHOP_DIR/image.sh" "$SHOP_IMAGE" || fail "the demo's image could not be made"
	rootfs_add "$WORK/broker-rootfs" "$BUILD/tests/kafka_broker" /kafka_broker
	container_image "$SHOP_BROKER_IMAGE" "$WORK/broker-rootfs"
	netns_bridge kmd-$SHOP_TAG-sw
	for t in "${SHOP_TIERS[@]}"; do
		read -r name addr port _ <<<"$t"
		peers+="$name=$SHOP_NET.$addr:$port,"
	done
	sed "s/@FRONTEND@/$SHOP_NET.3:8080/" "$SHOP_DIR/app/nginx.conf" >"$WORK/nginx.conf"
	for t in "${SHOP_TIERS[@]}"; do
		read -r name addr port cmd <<<"$t"
		netns_host kmd-$SHOP_TAG-$name $SHOP_NET.$addr
		fault=0
		[ "$name" = "$FAULT_TIER" ] && fault=$FAULT_MS
		eval "args=($cmd)"
		image=$SHOP_IMAGE
		# -i: the broker reads commands on stdin until its end
		[ "$name" = kafka ] && image="-i $SHOP_BROKER_IMAGE"
		container_run kmd-$name-$SHOP_TAG --network ns:/run/netns/kmd-$SHOP_TAG-$name \
			--annotation io.kubernetes.cri.sandbox-name=$name-7f9c4-$SHOP_TAG \
			--annotation io.kubernetes.cri.sandbox-namespace=$SHOP_NAMESPACE \
			--annotation io.kubernetes.cri.sandbox-uid=$(cat /proc/sys/kernel/random/uuid) \
			--annotation io.kubernetes.cri.container-name=$name \
			-v "$SHOP_DIR/app:/app:ro" -v "$WORK/nginx.conf:/etc/demo/nginx.conf:ro" \
			-e PEERS="$peers" -e FAULT_MS=$fault -e PYTHONUNBUFFERED=1 -e TIER=$name \
			-e PYTHONPATH=/app $image "${args[@]}" >/dev/null
	done
	netns_host kmd-$SHOP_TAG-client $SHOP_NET.200
	for t in "${SHOP_TIERS[@]}"; do
		read -r name addr port _ <<<"$t"
		for ((i = 0; i < 300; i++)); do
			ip netns exec kmd-$SHOP_TAG-$name ss -Hltn "sport = :$port" | grep -q . && break
			sleep 0.1
		done
		[ $i -lt 300 ] || fail "$name does not listen on $port: $("${PODMAN[@]}" logs kmd-$name-$SHOP_TAG 2>&1 | tail -5)"
	done
}

shop_load() {
	ip netns exec kmd-$SHOP_TAG-client python3 "$SHOP_DIR/loadgen.py" \
		--target $SHOP_NET.2:80 --rate "$1" --duration "$2" --log "$3" ||
		fail "the load generator failed"
}

shop_logs() {
	local t name
	mkdir -p "$1"
	for t in "${SHOP_TIERS[@]}"; do
		read -r name _ <<<"$t"
		"${PODMAN[@]}" logs kmd-$name-$SHOP_TAG >"$1/$name.log" 2>&1
	done
	sed -n 's/^SPAN //p' "$1"/*.log >"$1/spans.jsonl"
}

shop_orders() {
	ip netns exec kmd-$SHOP_TAG-client timeout 30 kcat -C -b $SHOP_NET.23:9092 -t orders \
		-o beginning -e -q -f '%k\n' >"$1" || fail "kcat could not read the orders"
}

shop_kmond_config() {
	local t name
	echo "node: demo-node"
	echo "interval: 1s"
	echo "services:"
	for t in "${SHOP_TIERS[@]}"; do
		read -r name _ <<<"$t"
		echo "  - { name: $name, match: { k8s: { namespace: $SHOP_NAMESPACE, pod: \"$name-*\" } } }"
	done
	sed -n '/^collectors:/,/^exporters:/p' "$SHOP_DIR/../configs/kmond.yaml" | sed '$d' |
		sed 's/^  tcp: { enabled: true,/  tcp: { enabled: true, occupancy: [{ service: frontend, tiers: 2 }, { service: checkout, tiers: 2 }],/' |
		tee "$WORK/collectors.yaml"
	grep -q 'occupancy: \[' "$WORK/collectors.yaml" ||
		fail "configs/kmond.yaml's tcp line changed: $(grep tcp: "$WORK/collectors.yaml")"
}
