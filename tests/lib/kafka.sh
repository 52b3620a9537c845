# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kafka helpers for the integration tests, sourced after kmond.sh: a
# loopback broker (build/tests/kafka_broker, librdkafka's mock cluster)
# steered through a fifo, and kcat to read what reached it.
#   start_broker [ARGS...]   sets $BROKERS (host:port list)
#   broker_cmd "down all"    sends one command, waits for its "ok"
#   consume TOPIC FILE       every message of TOPIC, one kcat -J line each
KAFKA_BROKER=$BUILD/tests/kafka_broker
KAFKA_MSGS="python3 $(dirname "${BASH_SOURCE[0]}")/kafka_msgs.py"
BROKERS=
BROKER_OKS=0

command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps.sh)"

start_broker() {
	local i
	mkfifo "$WORK/broker.in"
	"$KAFKA_BROKER" "$@" <"$WORK/broker.in" >"$WORK/broker.out" \
		2>"$WORK/broker.err" &
	STARTED_PIDS+=($!)
	# Held open on fd 9 so the broker sees no EOF between commands.
	exec 9>"$WORK/broker.in"
	for ((i = 0; i < 50; i++)); do
		BROKERS=$(awk '/^bootstrap /{print $2}' "$WORK/broker.out")
		[ -n "$BROKERS" ] && break
		sleep 0.1
	done
	[ -n "$BROKERS" ] || fail "kafka_broker did not start: $(cat "$WORK/broker.err")"
	echo "broker: $BROKERS"
}

broker_cmd() {
	local i
	echo "$1" >&9
	BROKER_OKS=$((BROKER_OKS + 1))
	for ((i = 0; i < 50; i++)); do
		[ "$(grep -c '^ok$' "$WORK/broker.out")" -ge $BROKER_OKS ] && return 0
		grep -q '^error' "$WORK/broker.out" && break
		sleep 0.1
	done
	fail "kafka_broker: '$1' failed: $(tail -1 "$WORK/broker.out")"
}

# Reads TOPIC from the beginning to its end. The topic must exist (kmond
# creates it on its first record); an absent topic yields an empty FILE.
consume() {
	timeout 30 kcat -C -b "$BROKERS" -t "$1" -o beginning -e -q -J \
		>"$2" 2>"$WORK/kcat.err" ||
		fail "kcat on $1: $(tail -3 "$WORK/kcat.err")"
}
