#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# HTTP/2 in the clear with collectors.tcp.outcomes false: the
# connection's control frames (the client's preface, SETTINGS and their
# ACKs, WINDOW_UPDATE) make no request of their own, as with outcomes on
# (http2_requests): one record per request on each end, the two ends
# joined by their sequence numbers, and no outcome fields. Once as
# shipped (the sends' control frames seen at the send's entry), once as
# a kernel before 6.13 runs it (no tcp_sendmsg_locked: seen by the
# egress program).
#
# Requests one after the other: curl --http2-prior-knowledge (one a
# connection, twice) and h2load -m 1 (6 on one connection, which goes
# on after protocol identification is done: no connection captures).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_protocols
command -v h2load >/dev/null || skip "h2load (nghttp2-client) missing"
H2C=$(test_port)
NGINX_LOCATIONS="
	listen 127.0.0.1:$H2C http2;
	location = /ok { return 200 \"ok\n\"; }
	location = /missing { return 404; }"
start_nginx "$(test_port)" 1

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { comm: curl } }
  - { name: load, match: { comm: h2load } }
collectors:
  tcp: { enabled: true, outcomes: false }
YAML

# requests_each_end DENY: the requests with kmond's probes denied DENY
# ("" for none), one record each on both ends
requests_each_end() {
	export KMOND_PROBE_DENY=$1
	start_kmond "$WORK/kmond.yaml"
	for run in 1 2; do
		curl -s --http2-prior-knowledge -o /dev/null \
			"http://127.0.0.1:$H2C/ok" || fail "curl --http2-prior-knowledge"
	done
	h2load -n 6 -c 1 -m 1 "http://127.0.0.1:$H2C/ok" \
		"http://127.0.0.1:$H2C/missing" >"$WORK/h2load.out" ||
		fail "h2load -m 1"
	grep -q '6 total, 6 started, 6 done' "$WORK/h2load.out" ||
		fail "h2load: $(cat "$WORK/h2load.out")"
	sleep 1.2 # two intervals: the quiet connections' last requests
	stop_kmond
	unset KMOND_PROBE_DENY
	python3 - "$WORK/out.json" "$H2C" <<'PY' || fail "HTTP/2 with outcomes off${1:+, $1 denied}"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
port = int(sys.argv[2])
tcp = [r for r in recs if r["kind"] == "tcp" and port in (r["lport"], r["rport"])]
errors = []

def side(name, comm=None):
    return [r for r in tcp if r["side"] == name and
            (comm is None or r["comm"] == comm)]

for name, comm, want in (("server", None, 8), ("client", "curl", 2),
                         ("client", "h2load", 6)):
    got = len(side(name, comm))
    if got != want:
        errors.append(f"{name} {comm or ''}: {got} records, want {want}: "
                      + str(sorted((r["req_bytes"], r["resp_bytes"])
                                   for r in side(name, comm))))
for r in tcp:
    if r["protocol"] != "http2":
        errors.append(f"{r['side']}: protocol {r['protocol']}")
    for field in ("status", "error", "method", "route"):
        if field in r:
            errors.append(f"{r['side']}: {field} {r[field]} with outcomes off")
# the two ends of each exchange: the same bytes past a connection's
# first request (a control frame sent alone may reach the other end in
# one segment with it: counted there)
client = {(r["req_seq"], r["resp_seq"]): r for r in side("client")}
first = {}
for s in side("server"):
    first[s["rport"]] = min(first.get(s["rport"], s["ts"]), s["ts"])
for s in side("server"):
    c = client.get((s["req_seq"], s["resp_seq"]))
    if c is None:
        errors.append(f"no client record for {s['req_seq']}/{s['resp_seq']}")
    elif s["ts"] != first[s["rport"]] and \
            (c["req_bytes"], c["resp_bytes"]) != (s["req_bytes"], s["resp_bytes"]):
        errors.append(f"ends differ: client {c['req_bytes']} "
                      f"{c['resp_bytes']}, server {s['req_bytes']} "
                      f"{s['resp_bytes']}")
if errors:
    sys.exit("\n".join(errors))
PY
	echo "ok: one record per HTTP/2 request on each end, outcomes off${1:+, $1 denied}"
}

requests_each_end ""
requests_each_end tcp_sendmsg_locked
