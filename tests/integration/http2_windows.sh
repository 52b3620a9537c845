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
# `tls`. A client's TLS record split across two segments mid-response
# made a request of its own at the read held for its first part; and a
# client that sends its request with its preface lost the response's
# status where nginx wrote its SETTINGS after the request came in.
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
# A client whose WINDOW_UPDATEs come in a TLS record split across two
# segments, 300 ms apart, in the middle of a response: nginx's SSL_read
# of the first part returns no plaintext (the record is not whole), the
# next returns the frames. The read held for the first began nothing:
# one record, the request's, with the whole response and its status (the
# client's request comes with its preface, as curl's does: nginx's
# SETTINGS may go out after it came in, at its acknowledgement).
split_window_update() {
	tls_kmond_on_nginx
	cat >"$WORK/split_record.py" <<'PY'
import socket, ssl, struct, sys, time
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, out, server_hostname="api.test")
def pump():
    data = sock.recv(65536)
    if not data:
        sys.exit("the server closed")
    inc.write(data)
while True:
    try:
        tls.do_handshake()
        break
    except ssl.SSLWantReadError:
        sock.sendall(out.read())
        pump()
sock.sendall(out.read())
assert tls.selected_alpn_protocol() == "h2", tls.selected_alpn_protocol()
def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
        struct.pack(">I", stream) + payload
def literal(index, value):  # HPACK: a literal of a static-table name
    return bytes([index, len(value)]) + value
# GET https /big, api.test: :method GET, :scheme https indexed
head = b"\x82\x87" + literal(4, b"/big") + literal(1, b"api.test")
tls.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) +
          frame(1, 0x5, 1, head))
sock.sendall(out.read())
plain, data, ended, updated = b"", 0, False, False
while not ended:
    try:
        plain += tls.read(65536)
    except ssl.SSLWantReadError:
        if data >= 60000 and not updated:
            # most of the 64 KiB window taken: the rest waits for this
            time.sleep(0.3)
            tls.write(frame(8, 0, 0, struct.pack(">I", 1 << 20)) +
                      frame(8, 0, 1, struct.pack(">I", 1 << 20)))
            record = out.read()
            sock.sendall(record[:10])
            time.sleep(0.3)
            sock.sendall(record[10:])
            updated = True
        pump()
        continue
    while len(plain) >= 9:
        n = int.from_bytes(plain[:3], "big")
        if len(plain) < 9 + n:
            break
        kind, flags, stream = plain[3], plain[4], int.from_bytes(plain[5:9], "big")
        if kind == 0 and stream == 1:
            data += n
            ended = bool(flags & 1)
        plain = plain[9 + n:]
print(sock.getsockname()[1], data)
sock.close()
PY
	set -- $(python3 "$WORK/split_record.py" "$H2S") ||
		fail "the client whose record is split"
	expect_eq "bytes of the response" "$2" 262144
	sleep 1.2 # two intervals: the closed connection's record
	stop_kmond
	python3 - "$WORK/out.json" "$H2S" "$1" <<'PY' || fail "a TLS record split mid-response"
import json, sys
port, cport = int(sys.argv[2]), int(sys.argv[3])
rs = [r for r in map(json.loads, open(sys.argv[1]))
      if r["kind"] == "tcp" and r["side"] == "server" and r["lport"] == port
      and r["rport"] == cport]
got = [(r.get("method"), r.get("status"), r["resp_bytes"]) for r in rs]
if len(rs) != 1 or got[0][:2] != ("GET", 200) or got[0][2] < 262144:
    sys.exit(f"records {got}, want one: GET 200, the whole response")
PY
	echo "ok: WINDOW_UPDATEs in a TLS record split mid-response: one record"
}

if tls_in_plaintext; then
	windows true "" tls
	windows false "" tls
	split_window_update
else
	echo "TLS is not read in plaintext here: its runs left out"
fi
