#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A server with many clients kmond cannot name (5000 addresses, none a
# process kmond monitors) does not exhaust the topology edges: those
# clients share one edge, src "external", and the clients at a known
# node's address (collectors.tcp.nodes) keep an edge each. Every request
# is in the topology, exactly. The clients run in a network namespace the
# test makes, whose loopback holds two /16s (every address in them local).
# The known nodes' 250 new edges in a row run the kernel's pool of per-CPU
# memory dry (38 to 80 of them failed here): user space counts those
# requests (struct tcp_edge_miss) and reports them, none lost: alone, or
# with the edge the kernel made at the client's second request.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/tcp_svc.sh"

N=5000 K=250
NS=kmt_topo_$$
ip netns add "$NS" || fail "cannot create netns $NS"
trap 'cleanup; ip netns del "$NS" 2>/dev/null' EXIT
ip -n "$NS" link set lo up &&
	ip -n "$NS" addr add 10.251.0.1/16 dev lo &&
	ip -n "$NS" addr add 10.252.0.1/16 dev lo || fail "cannot address $NS"
PORT=$(test_port)
start_svc srv ip netns exec "$NS" $SVC server --bind 10.251.0.1 --port $PORT
server=$SVC_PID

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - name: web
    match: { pid: $server }
collectors:
  tcp: { enabled: true, requests: none, nodes: [10.252.0.0/16, "fd00::/8"] }
YAML
start_kmond "$WORK/kmond.yaml"
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$KMOND_PID/status"; }
rss_before=$(rss)

ip netns exec "$NS" python3 - $PORT $N $K <<'PY' || fail "the clients failed"
import socket, sys
port, n, k = (int(x) for x in sys.argv[1:])
req = b"0 1000 " + b"x" * 92 + b"\n"
def one(src):
    with socket.socket() as s:
        s.bind((src, 0))
        s.connect(("10.251.0.1", port))
        s.sendall(req)
        got = 0
        while got < 1000:
            got += len(s.recv(4096))
for i in range(n):
    one("10.251.%d.%d" % (1 + i // 250, 1 + i % 250))
for _ in range(2):
    for i in range(k):
        one("10.252.0.%d" % (2 + i))
PY
# A request counts when its connection closes on the server's side too:
# wait (10 s at most, times TEST_TIME_SCALE in a slow guest) until every
# one is in the topology records.
for _ in $(seq $((100 * ${TEST_TIME_SCALE:-1}))); do
	[ "$($RECORDS "$WORK/out.json" --kind topology --where dst=web --sum requests)" = $((N + 2 * K)) ] &&
		break
	sleep 0.1
done
sleep 0.6 # one more interval: nothing beyond them
# Where requests went, should some be missing: the kernel's count of
# requests finished (events), the connections accepted unmonitored, the
# losses.
python3 -c '
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if "\"stats\"" in l][-1]
t = last["collectors"]["tcp"]
print("tcp stats:", {k: t[k] for k in ("events", "lost", "accepted_unmonitored") if k in t})' "$WORK/out.json"
rss_after=$(rss)
stop_kmond

out=$WORK/out.json
expect_eq "requests from external clients" \
	"$($RECORDS "$out" --kind topology --where dst=web --where src=external --sum requests)" $N
known=$($RECORDS "$out" --kind topology --where dst=web --values src | sort -u | grep -c '^10\.252\.0\.')
expect_eq "known-node clients with an edge each" "$known" $K
expect_eq "requests of the known-node clients" \
	"$($RECORDS "$out" --kind topology --where dst=web --sum requests)" $((N + 2 * K))
other=$($RECORDS "$out" --kind topology --where dst=web --values src | grep -v '^10\.252\.0\.' | sort -u | xargs)
expect_eq "other sources" "$other" external
# None lost; should some be, the causes say which (they add up to lost).
python3 - "$out" <<'PY' || fail "tcp events lost"
import json, sys
stats = [json.loads(l) for l in open(sys.argv[1]) if '"stats"' in l]
t = stats[-1]["collectors"]["tcp"]
causes = ("records_lost", "conns_full", "edges_full", "samples_lost",
          "samples_untracked", "loads_full", "steps_lost", "loads_broken",
          "missed")
by = {k: t[k] for k in causes if t[k]}
print("tcp lost:", t["lost"], by)
if sum(t[k] for k in causes) != t["lost"]:
    sys.exit(f"the causes add up to {sum(t[k] for k in causes)}, not {t['lost']}")
if max(s["collectors"]["tcp"]["lost"] for s in stats):
    sys.exit(f"tcp events lost: {t['lost']} ({by}), want 0")
PY
# Each connection closed before its protocol's verdict reached the
# kernel: user space moves its requests on the same external edge. Were
# it to key them by each client's address, it would hold a state of 8 KiB
# per client for good (34 MiB here; 5 MiB for an interval, when the
# states of edges the kernel lacks go at each report). The known nodes'
# 250 edges hold 8 KiB each, 2 MiB (0.2 to 0.4 MiB grown: the heap reuses
# what start-up freed). Under ASan freed memory waits in quarantine:
# 10 MiB grown.
bound=6
ldd "$KMOND" | grep -q libasan && bound=20
grown=$(((rss_after - rss_before) / 1024))
echo "kmond's RSS grew by $grown MiB over $N external clients (at most $bound)"
[ "$grown" -lt $bound ] || fail "kmond's RSS grew by $grown MiB: state per external client"
