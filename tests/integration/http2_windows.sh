#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# HTTP/2 flow control in the middle of responses (docs/design/outcomes.md,
# "HTTP/2"): responses larger than the client's window (h2load -w 14:
# 16 KiB a stream, -W 14 the connection's) make the client send
# WINDOW_UPDATEs while each response is still being sent, a stream's
# and the connection's each in a segment of its own, and the server
# may read both at once. They are no request of their own: one record
# per request on each end, joined by their sequence numbers, with the
# same bytes. In the clear (h2c), outcomes on and off, and as a kernel
# before 6.13 runs it (no tcp_sendmsg_locked: the sends' control frames
# seen by the egress program).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_protocols
command -v h2load >/dev/null || skip "h2load (nghttp2-client) missing"
H2C=$(test_port)
NGINX_LOCATIONS="
	listen 127.0.0.1:$H2C http2;"
start_nginx "$(test_port)" 1
head -c 262144 /dev/urandom >"$WORK/nginx/html/big"
N=8

# windows OUTCOMES [DENY]: N sequential requests for big on one
# connection, kmond's probes DENY denied
windows() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: load, match: { comm: h2load } }
collectors:
  tcp: { enabled: true, outcomes: $1 }
YAML
	export KMOND_PROBE_DENY=${2:-}
	start_kmond "$WORK/kmond.yaml"
	unset KMOND_PROBE_DENY
	h2load -n $N -c 1 -m 1 -w 14 -W 14 "http://127.0.0.1:$H2C/big" \
		>"$WORK/h2load.out" || fail "h2load"
	grep -q "$N total, $N started, $N done, $N succeeded" "$WORK/h2load.out" ||
		fail "h2load: $(cat "$WORK/h2load.out")"
	sleep 1.2 # two intervals: the quiet connection's last request
	stop_kmond
	python3 - "$WORK/out.json" "$H2C" "$N" "$1" <<'PY' || fail "HTTP/2 windows, outcomes $1${2:+, $2 denied}"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
port, n, outcomes = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "true"
tcp = [r for r in recs if r["kind"] == "tcp" and port in (r["lport"], r["rport"])]
errors = []
def side(name):
    return [r for r in tcp if r["side"] == name]
for name in ("server", "client"):
    rs = side(name)
    if len(rs) != n:
        errors.append(f"{name}: {len(rs)} records, want {n}: " + str(
            [(r["req_bytes"], r["resp_bytes"], r.get("status")) for r in rs]))
    for r in rs:
        if r["protocol"] != "http2":
            errors.append(f"{name}: protocol {r['protocol']}")
        if outcomes and (r.get("status"), r.get("error")) != (200, False):
            errors.append(f"{name}: status {r.get('status')} error {r.get('error')}")
        if r["resp_bytes"] < 262144:
            errors.append(f"{name}: a response of {r['resp_bytes']} bytes")
# the same exchange on both ends, with the same bytes past the first
# request (whose control frames may reach the other end with it)
client = {(r["req_seq"], r["resp_seq"]): r for r in side("client")}
first = min((r["ts"] for r in side("server")), default=0)
for s in side("server"):
    c = client.get((s["req_seq"], s["resp_seq"]))
    if c is None:
        errors.append(f"no client record for {s['req_seq']}/{s['resp_seq']}")
    elif s["ts"] != first and \
            (c["req_bytes"], c["resp_bytes"]) != (s["req_bytes"], s["resp_bytes"]):
        errors.append(f"ends differ: client {c['req_bytes']} {c['resp_bytes']}, "
                      f"server {s['req_bytes']} {s['resp_bytes']}")
if errors:
    sys.exit("\n".join(errors))
PY
	echo "ok: $N large HTTP/2 responses, one record each on each end, outcomes $1${2:+, $2 denied}"
}

windows true
windows false
windows true tcp_sendmsg_locked
windows false tcp_sendmsg_locked
