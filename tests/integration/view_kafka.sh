#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# kmon-view -b: records produced to kmon.offcpu and kmon.topology (on
# a local mock broker, spread over 4 partitions) give the same pictures as
# the same records read from a file; a bad message is reported with its
# topic, partition and offset; empty topics and an unreachable broker are
# clear errors.
source "$(dirname "$0")/../lib/kmond.sh"

VIEW=$BUILD/kmon-view
python3 "$(dirname "$0")/../lib/view_check.py" "$VIEW" "$WORK" sample ||
	fail "cannot write the sample records"

mkfifo "$WORK/broker.in"
"$BUILD/tests/kafka_broker" <"$WORK/broker.in" >"$WORK/broker.out" 2>"$WORK/broker.err" &
STARTED_PIDS+=($!)
exec 3>"$WORK/broker.in" # keeps the broker's stdin open
for ((i = 0; i < 50; i++)); do
	grep -q '^bootstrap ' "$WORK/broker.out" && break
	sleep 0.1
done
brokers=$(sed -n 's/^bootstrap //p' "$WORK/broker.out")
[ -n "$brokers" ] || fail "the mock broker did not start: $(cat "$WORK/broker.err")"

# Lines go round-robin to partitions 0..3 with -p: without a key,
# librdkafka's sticky partitioner may put a whole small batch in one.
produce() { # TOPIC FILE
	local p
	for p in 0 1 2 3; do
		awk -v p=$p 'NR % 4 == p' "$2" >"$WORK/part.$p"
		[ -s "$WORK/part.$p" ] || continue
		kcat -P -b "$brokers" -t "$1" -p $p <"$WORK/part.$p" 2>>"$WORK/kcat.err" ||
			fail "kcat could not produce to $1[$p]: $(tail -3 "$WORK/kcat.err")"
	done
}
produce kmon.offcpu "$WORK/off.json"
produce kmon.topology "$WORK/topo.json"

parts=$(kcat -C -b "$brokers" -t kmon.offcpu -e -q -f '%p\n' 2>/dev/null | sort -u | wc -l)
[ "$parts" -ge 2 ] || fail "the records landed in $parts partition(s); the test wants several"
echo "ok: kmon.offcpu records spread over $parts partitions"

"$VIEW" flame -i "$WORK/off.json" --folded >"$WORK/file.folded" || fail "flame -i"
"$VIEW" flame -b "$brokers" --folded >"$WORK/kafka.folded" ||
	fail "flame -b exited with $?"
cmp -s "$WORK/file.folded" "$WORK/kafka.folded" ||
	fail "flame -b differs from flame -i: $(diff "$WORK/file.folded" "$WORK/kafka.folded" | head -5)"
echo "ok: flame -b = flame -i ($(wc -l <"$WORK/kafka.folded") stacks)"

# --kafka, -b's old spelling, still works for one release, and says so.
"$VIEW" flame --kafka "$brokers" --folded >"$WORK/old.folded" 2>"$WORK/old.err" ||
	fail "flame --kafka exited with $?: $(cat "$WORK/old.err")"
cmp -s "$WORK/file.folded" "$WORK/old.folded" || fail "flame --kafka differs from flame -i"
expect_eq "flame --kafka's warning" "$(cat "$WORK/old.err")" \
	"kmon-view: --kafka is deprecated and will be removed in the next release; use -b/--brokers"
echo "ok: flame --kafka = flame -b, with a warning"

"$VIEW" topology -i "$WORK/topo.json" >"$WORK/file.dot" || fail "topology -i"
"$VIEW" topology --brokers "$brokers" >"$WORK/kafka.dot" || fail "topology --brokers"
cmp -s "$WORK/file.dot" "$WORK/kafka.dot" ||
	fail "topology --brokers differs: $(diff "$WORK/file.dot" "$WORK/kafka.dot" | head -5)"
echo "ok: topology --brokers = topology -i"

# Another prefix, and a message that is not JSON after a good one.
head -1 "$WORK/off.json" >"$WORK/bad.json"
echo '{"kind":"offcpu","ts":' >>"$WORK/bad.json"
kcat -P -b "$brokers" -t test.offcpu -p 0 <"$WORK/bad.json" 2>>"$WORK/kcat.err" ||
	fail "kcat could not produce to test.offcpu"
"$VIEW" flame -b "$brokers" -p test. --folded >/dev/null 2>"$WORK/err"
expect_eq "exit code of a bad Kafka message" $? 2
expect_eq "bad Kafka message" "$(cat "$WORK/err")" \
	"test.offcpu[0]@1: not JSON (column 23): expected a value, got end of input"

"$VIEW" heatmap -b "$brokers" --prefix none. --output "$WORK/x.svg" 2>"$WORK/err"
expect_eq "exit code of empty topics" $? 2
expect_eq "empty topics" "$(cat "$WORK/err")" \
	"$brokers: kafka: empty input: no messages in none.offcpu, none.offcpu_hist"
[ ! -e "$WORK/x.svg" ] || fail "an output was written for empty topics"

# A port nothing listens on: a runtime failure (exit 1), within the timeout.
port=$(test_port)
start=$SECONDS
"$VIEW" flame -b "127.0.0.1:$port" --folded >/dev/null 2>"$WORK/err"
expect_eq "exit code of an unreachable broker" $? 1
grep -q "^127.0.0.1:$port: kafka: metadata of kmon.offcpu: " "$WORK/err" ||
	fail "unreachable broker message: $(cat "$WORK/err")"
[ $((SECONDS - start)) -le 20 ] || fail "an unreachable broker took $((SECONDS - start)) s"
echo "ok: unreachable broker: exit 1 in $((SECONDS - start)) s"

echo quit >&3
