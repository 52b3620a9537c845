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
# seen by the egress program). Over TLS where kmond reads it in
# plaintext, outcomes on and off: nginx's socket read of the
# WINDOW_UPDATEs inside SSL_read tells nothing until SSL_read returns,
# and is held until then (tls_hold_read); one record per request on the
# server's end, with its status and method where outcomes are on (none
# where they are off). h2load's end is not checked there: it may
# connect before its uprobes are attached (tls_curl), and then reads
# `tls`.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_protocols
command -v h2load >/dev/null || skip "h2load (nghttp2-client) missing"
H2C=$(test_port)
H2S=$(test_port)
tls_cert api.test
nginx_tls "$H2S http2"
NGINX_LOCATIONS+="
	listen 127.0.0.1:$H2C http2;"
start_nginx "$(test_port)" 1
head -c 262144 /dev/urandom >"$WORK/nginx/html/big"
N=8

# windows OUTCOMES [DENY] [tls]: N sequential requests for big on one
# connection, kmond's probes DENY denied, over TLS when tls
windows() {
	local port=$H2C url=http://127.0.0.1:$H2C/big
	[ "${3:-}" = tls ] && port=$H2S url=https://127.0.0.1:$H2S/big
	cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: load, match: { comm: h2load } }
collectors:
  tcp: { enabled: true, outcomes: $1 }
YAML
	export KMOND_PROBE_DENY=${2:-}
	start_kmond "$WORK/kmond.yaml" ${3:+-v}
	unset KMOND_PROBE_DENY
	[ "${3:-}" = tls ] && tls_wait_attached $(pgrep -P "$NGINX_PID")
	h2load -n $N -c 1 -m 1 -w 14 -W 14 "$url" \
		>"$WORK/h2load.out" || fail "h2load"
	grep -q "$N total, $N started, $N done, $N succeeded" "$WORK/h2load.out" ||
		fail "h2load: $(cat "$WORK/h2load.out")"
	sleep 1.2 # two intervals: the quiet connection's last request
	stop_kmond
	python3 - "$WORK/out.json" "$port" "$N" "$1" "${3:-}" <<'PY' || fail "HTTP/2 windows, outcomes $1${2:+, $2 denied}${3:+, $3}"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
port, n, outcomes = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "true"
tls = sys.argv[5] == "tls"
tcp = [r for r in recs if r["kind"] == "tcp" and port in (r["lport"], r["rport"])]
errors = []
def side(name):
    return [r for r in tcp if r["side"] == name]
for name in ("server",) if tls else ("server", "client"):
    rs = side(name)
    if len(rs) != n:
        errors.append(f"{name}: {len(rs)} records, want {n}: " + str(
            [(r["req_bytes"], r["resp_bytes"], r.get("status")) for r in rs]))
    for r in rs:
        if r["protocol"] != "http2":
            errors.append(f"{name}: protocol {r['protocol']}")
        if outcomes and (r.get("status"), r.get("error")) != (200, False):
            errors.append(f"{name}: status {r.get('status')} error {r.get('error')}")
        if tls and r.get("tls") is not True:
            errors.append(f"{name}: tls {r.get('tls')}")
        if tls and outcomes and r.get("method") != "GET":
            errors.append(f"{name}: method {r.get('method')}")
        if tls and not outcomes and ("status" in r or "method" in r):
            errors.append(f"{name}, outcomes off: status {r.get('status')}, "
                          f"method {r.get('method')}")
        if r["resp_bytes"] < 262144:
            errors.append(f"{name}: a response of {r['resp_bytes']} bytes")
# the same exchange on both ends, with the same bytes past the first
# request (whose control frames may reach the other end with it)
client = {(r["req_seq"], r["resp_seq"]): r for r in side("client")}
first = min((r["ts"] for r in side("server")), default=0)
for s in [] if tls else side("server"):
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
	echo "ok: $N large HTTP/2 responses, one record each, outcomes $1${2:+, $2 denied}${3:+, $3}"
}

windows true
windows false
windows true tcp_sendmsg_locked
windows false tcp_sendmsg_locked
if tls_in_plaintext; then
	windows true "" tls
	windows false "" tls
else
	echo "TLS is not read in plaintext here: its runs left out"
fi
