#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Protocol identification against the two servers that start slowly
# (Erlang, Java), apart from proto_servers.sh: RabbitMQ with amqp-tools'
# clients (AMQP 0-9-1) and ZooKeeper with kazoo and its own zkCli
# (ZooKeeper), each on a random port, in the test's directory, started
# together. Every connection must be named, every endpoint too, nothing
# misnamed (proto_check.py's confusion matrices; a macro F1 of 1).
source "$(dirname "$0")/../lib/kmond.sh"

need_protocols

N=${PROTO_CONNS:-10} # connections per client kind
P=$(test_port 4)
AMQP=$P EPMD=$((P + 1)) DIST=$((P + 2)) ZK=$((P + 3))
# Debian's Python, which has python3-kazoo (a python3 earlier in PATH,
# a pyenv one say, has not)
PY=/usr/bin/python3
t0=$SECONDS

# --- RabbitMQ: its own epmd on a port of ours (not the host's 4369),
# its node, files and Erlang cookie ($HOME) under $WORK, no plugins ---
epmd -port $EPMD -address 127.0.0.1 >"$WORK/epmd.log" 2>&1 &
STARTED_PIDS+=($!)
mkdir -p "$WORK/rabbit"
echo '[].' >"$WORK/rabbit/enabled_plugins"
# The script (not Debian's /usr/sbin wrapper, which changes user) stops
# the node when it gets SIGTERM: killing its pid stops everything.
HOME="$WORK/rabbit" ERL_EPMD_PORT=$EPMD \
	RABBITMQ_NODENAME="kmond-test-$$@localhost" \
	RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$AMQP \
	RABBITMQ_DIST_PORT=$DIST RABBITMQ_MNESIA_BASE="$WORK/rabbit/mnesia" \
	RABBITMQ_LOG_BASE="$WORK/rabbit/log" \
	RABBITMQ_ENABLED_PLUGINS_FILE="$WORK/rabbit/enabled_plugins" \
	RABBITMQ_CONFIG_FILE="$WORK/rabbit/rabbitmq" \
	RABBITMQ_ADVANCED_CONFIG_FILE="$WORK/rabbit/advanced.config" \
	RABBITMQ_CONF_ENV_FILE="$WORK/rabbit/env" \
	RABBITMQ_PID_FILE="$WORK/rabbit/pid" \
	/usr/lib/rabbitmq/bin/rabbitmq-server >"$WORK/rabbitmq.log" 2>&1 &
STARTED_PIDS+=($!)

# --- ZooKeeper: a standalone server, no admin web server (port 8080) ---
mkdir -p "$WORK/zk"
cat >"$WORK/zk/zoo.cfg" <<CFG
tickTime=2000
dataDir=$WORK/zk/data
clientPort=$ZK
clientPortAddress=127.0.0.1
admin.enableServer=false
CFG
# -XX:-UsePerfData: nothing in /tmp/hsperfdata_$USER
java -XX:-UsePerfData -cp /usr/share/java/zookeeper.jar -Dzookeeper.log.dir="$WORK/zk" \
	org.apache.zookeeper.server.ZooKeeperServerMain "$WORK/zk/zoo.cfg" \
	>"$WORK/zookeeper.log" 2>&1 &
STARTED_PIDS+=($!)

wait_port $ZK 60 || fail "zookeeper did not start on port $ZK: $(tail -5 "$WORK/zookeeper.log")"
wait_port $AMQP 60 || fail "rabbitmq did not start on port $AMQP: $(tail -5 "$WORK/rabbitmq.log")"
echo "servers up after $((SECONDS - t0)) s"

cat >"$WORK/kmond.yaml" <<YAML
interval: 1s
services:
  - { name: mq, match: { port: $AMQP } }
  - { name: zk, match: { port: $ZK } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 1.2 # the provider finds the servers by port

# --- clients: one connection each ---
url=amqp://guest:guest@127.0.0.1:$AMQP
amqp-declare-queue -u $url -q q >/dev/null || fail "amqp-declare-queue"
for ((i = 0; i < N; i++)); do
	amqp-publish -u $url -r q -b "message $i" || fail "amqp-publish $i"
done
amqp-get -u $url -q q >/dev/null || fail "amqp-get"
# amqp-consume waits for deliveries: one left in the queue
amqp-consume -u $url -q q -c 1 cat >/dev/null || fail "amqp-consume"
$PY - $ZK $N <<'PY' || fail "kazoo clients"
import sys
from kazoo.client import KazooClient
port, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    z = KazooClient(hosts=f"127.0.0.1:{port}")
    z.start(timeout=10)
    z.ensure_path("/kmond")
    z.set("/kmond", b"%d" % i)
    z.get("/kmond")
    z.stop()
    z.close()
PY
CLIENT_JVMFLAGS=-XX:-UsePerfData /usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:$ZK get /kmond \
	>"$WORK/zkcli.out" 2>&1 || fail "zkCli: $(tail -3 "$WORK/zkcli.out")"
sleep 2.2 # two intervals
stop_kmond

python3 "$(dirname "$0")/../lib/proto_check.py" "$WORK/out.json" \
	$AMQP=amqp@mq $ZK=zookeeper@zk --min-f1 1 ||
	fail "protocol identification"
lost=$($RECORDS "$WORK/out.json" --kind stats --values lost 2>/dev/null | sort -n | tail -1)
echo "kmond lost: ${lost:-0}; test ran $((SECONDS - t0)) s"
