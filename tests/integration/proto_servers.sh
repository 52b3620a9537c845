#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Protocol identification against real Debian servers and clients, each
# server on a random port (the port gives nothing away): nginx (HTTP/1.1
# and HTTP/2 prior knowledge, curl), openssl s_server (TLS, curl with
# SNI), redis (redis-benchmark, redis-cli), PostgreSQL (pgbench simple,
# extended, prepared), MariaDB (mariadb), memcached (memcslap text and
# binary), mosquitto (mosquitto_pub/sub), Kafka (the librdkafka mock
# broker, kcat), dnsmasq (dig +tcp), sshd (ssh), and a protocol of our own
# (tests/lib/proto_custom.py) that must stay unknown. Prints the
# confusion matrices per connection and per endpoint; fails below a macro
# F1 of 0.995, below 99% unknown for our protocol, or on any endpoint
# named wrongly. AMQP and ZooKeeper, whose servers start slowly, are in
# proto_servers_slow.sh.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"
source "$(dirname "$0")/../lib/kafka.sh"
source "$(dirname "$0")/../lib/servers.sh"

need_protocols

N=${PROTO_CONNS:-12} # connections per client kind

P=$(test_port 12)
HTTP=$P H2=$((P + 1)) TLS=$((P + 2)) REDIS=$((P + 3)) PG=$((P + 4))
MYSQL=$((P + 5)) MC=$((P + 6)) MQTT=$((P + 7)) KAFKA=$((P + 8))
DNS=$((P + 9)) SSH=$((P + 10)) CUSTOM=$((P + 11))

bg() { # runs a server in the background, its pid in STARTED_PIDS
	"$@" >>"$WORK/servers.log" 2>&1 &
	STARTED_PIDS+=($!)
}

# --- servers (before kmond: their listen() is in the listen list) ---
# Two nginx instances: one process is one service, and one service with
# two protocols would make its edges' protocol a vote.
start_nginx_on() { # DIR LISTEN
	mkdir -p "$WORK/$1/logs" "$WORK/$1/html"
	echo hello >"$WORK/$1/html/index.html"
	cat >"$WORK/$1/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $WORK/$1/nginx.pid;
error_log $WORK/$1/logs/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $WORK/$1/tb;
	proxy_temp_path $WORK/$1/tp;
	fastcgi_temp_path $WORK/$1/tf;
	uwsgi_temp_path $WORK/$1/tu;
	scgi_temp_path $WORK/$1/ts;
	server { listen $2; root $WORK/$1/html; }
}
NGINX
	bg nginx -p "$WORK/$1" -c "$WORK/$1/nginx.conf"
}
start_nginx_on nginx "127.0.0.1:$HTTP"
start_nginx_on nginx-h2 "127.0.0.1:$H2 http2"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=api.test -batch 2>/dev/null ||
	fail "openssl req"
bg openssl s_server -accept $TLS -4 -key "$WORK/key.pem" \
	-cert "$WORK/cert.pem" -www -quiet

start_redis $REDIS
start_postgres $PG
start_mariadb $MYSQL

bg memcached -p $MC -l 127.0.0.1 -U 0 -u root
bg mosquitto -p $MQTT
start_broker -p $KAFKA
bg dnsmasq -k -p $DNS --listen-address=127.0.0.1 --bind-interfaces \
	--no-resolv --no-hosts --address=/svc.test/10.1.2.3 \
	--pid-file="$WORK/dnsmasq.pid" --user=root
ssh-keygen -q -t ed25519 -N '' -f "$WORK/ssh_host_key" || fail "ssh-keygen"
mkdir -p /run/sshd # privilege separation directory sshd insists on
bg /usr/sbin/sshd -D -p $SSH -h "$WORK/ssh_host_key" \
	-o ListenAddress=127.0.0.1 -o PidFile="$WORK/sshd.pid"
start_svc custom python3 "$(dirname "$0")/../lib/proto_custom.py" server $CUSTOM

for p in $HTTP:nginx $H2:nginx-h2 $TLS:s_server $REDIS:redis $PG:postgres \
	$MYSQL:mariadb $MC:memcached $MQTT:mosquitto $KAFKA:kafka $DNS:dnsmasq \
	$SSH:sshd; do
	wait_port "${p%%:*}" || fail "${p#*:} did not start on port ${p%%:*}"
done

cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: web, match: { port: $HTTP } }
  - { name: grpc, match: { port: $H2 } }
  - { name: tls, match: { port: $TLS } }
  - { name: cache, match: { port: $REDIS } }
  - { name: db, match: { port: $PG } }
  - { name: maria, match: { port: $MYSQL } }
  - { name: memc, match: { port: $MC } }
  - { name: broker, match: { port: $MQTT } }
  - { name: kafka, match: { port: $KAFKA } }
  - { name: dns, match: { port: $DNS } }
  - { name: ssh, match: { comm: sshd } } # its per-connection children too
  - { name: custom, match: { port: $CUSTOM } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 1.2 # the provider finds the servers by port

# --- clients ---
for ((i = 0; i < N; i++)); do
	curl -s -o /dev/null http://127.0.0.1:$HTTP/index.html
	curl -s -o /dev/null -d a=$i http://127.0.0.1:$HTTP/index.html
	curl -s -o /dev/null --http2-prior-knowledge http://127.0.0.1:$H2/index.html
	curl -sk -o /dev/null --resolve api.test:$TLS:127.0.0.1 https://api.test:$TLS/
	redis-cli -p $REDIS set k$i v >/dev/null
	mariadb -h 127.0.0.1 -P $MYSQL -u root -e "select $i" >/dev/null
	mosquitto_pub -h 127.0.0.1 -p $MQTT -t t -m $i
	dig +tcp +short -p $DNS @127.0.0.1 h$i.svc.test >/dev/null
	timeout 5 ssh -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null -p $SSH nobody@127.0.0.1 true \
		2>/dev/null
	timeout 5 kcat -b 127.0.0.1:$KAFKA -L -m 2 >/dev/null 2>&1
done
redis-benchmark -p $REDIS -c 4 -n 400 -t set,get -q >/dev/null ||
	fail "redis-benchmark"
# pipelined: 16 commands a write
redis-benchmark -p $REDIS -c 2 -n 400 -P 16 -t set,get -q >/dev/null ||
	fail "redis-benchmark -P 16"
memcslap --servers=127.0.0.1:$MC --concurrency=4 --execute-number=50 \
	>/dev/null 2>&1 || fail "memcslap"
memcslap --servers=127.0.0.1:$MC --concurrency=4 --execute-number=50 \
	--binary >/dev/null 2>&1 || fail "memcslap --binary"
timeout 5 mosquitto_sub -h 127.0.0.1 -p $MQTT -t t -C 1 -W 2 >/dev/null 2>&1
echo hello | timeout 5 kcat -b 127.0.0.1:$KAFKA -P -t t1 2>/dev/null
pgbench -h 127.0.0.1 -p $PG -U postgres -i -s 1 postgres >/dev/null 2>&1 ||
	fail "pgbench -i"
for mode in simple extended prepared; do
	pgbench -h 127.0.0.1 -p $PG -U postgres -M $mode -c 2 -t 20 postgres \
		>/dev/null 2>&1 || fail "pgbench -M $mode"
done
python3 "$(dirname "$0")/../lib/proto_custom.py" client $CUSTOM $((N * 10)) ||
	fail "custom client"
sleep 2.2 # two intervals
stop_kmond

python3 "$(dirname "$0")/../lib/proto_check.py" "$WORK/out.json" \
	$HTTP=http@web $H2=http2@grpc $TLS=tls@tls $REDIS=redis@cache \
	$PG=postgresql@db $MYSQL=mysql@maria $MC=memcached@memc \
	$MQTT=mqtt@broker $KAFKA=kafka@kafka $DNS=dns@dns $SSH=ssh@ssh \
	$CUSTOM=unknown@custom || fail "protocol identification"
# the server name of the ClientHellos (curl sent api.test)
sni=$(python3 -c 'import json, sys
print(",".join(sorted({r.get("tls_sni", "-") for r in map(json.loads, open(sys.argv[1]))
      if r["kind"] == "endpoint" and r["port"] == int(sys.argv[2])})))' "$WORK/out.json" $TLS)
expect_eq "tls_sni of the TLS endpoint" "$sni" "api.test"
# and on every tcp record of its connections
sni=$(python3 -c 'import json, sys
print(",".join(sorted({r.get("tls_sni", "-") for r in map(json.loads, open(sys.argv[1]))
      if r["kind"] == "tcp" and r["lport"] == int(sys.argv[2])})))' "$WORK/out.json" $TLS)
expect_eq "tls_sni of the TLS connections' tcp records" "$sni" "api.test"
lost=$($RECORDS "$WORK/out.json" --kind stats --values lost 2>/dev/null | sort -n | tail -1)
echo "kmond lost: ${lost:-0}"
