#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Request paths through an HTTP/2 front over TLS: nginx serves HTTPS
# (h2) and proxies each request to itself on plain HTTP/1.1, and h2load
# asks for N responses of 64 KiB on one connection, one at a time, with
# HTTP/2's default windows (its WINDOW_UPDATEs come in the middle of
# each response). A read in the middle of a response is held until its
# plaintext is known (tls_hold_read); a request read after a response
# written whole (its END_STREAM, by the frames nginx wrote) begins at
# its read, so the upstream call nginx makes for it finds its parent.
# Exactly N front records, each with its status; N upstream calls, each
# with a distinct front record's id as its parent.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
command -v h2load >/dev/null || skip "h2load (nghttp2-client) missing"
HTTP=$(test_port)
H2=$(test_port)
N=6
tls_cert api.test
nginx_tls "$H2 http2"
NGINX_LOCATIONS+="
		location /p/ { proxy_pass http://127.0.0.1:$HTTP/; }"
start_nginx "$HTTP" 1
head -c 65536 /dev/urandom >"$WORK/nginx/html/big"

tls_kmond_on_nginx
h2load -n $N -c 1 -m 1 "https://127.0.0.1:$H2/p/big" >"$WORK/h2load.out" ||
	fail "h2load"
grep -q "$N total, $N started, $N done, $N succeeded" "$WORK/h2load.out" ||
	fail "h2load: $(cat "$WORK/h2load.out")"
sleep 1.2 # two intervals: the quiet connection's last request
stop_kmond
python3 - "$WORK/out.json" "$H2" "$HTTP" "$N" <<'PY' || fail "paths through HTTP/2 over TLS"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
h2, http, n = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tcp = [r for r in recs if r["kind"] == "tcp"]
front = [r for r in tcp if r["side"] == "server" and r["lport"] == h2]
calls = [r for r in tcp if r["side"] == "client" and r["rport"] == http]
errors = []
if len(front) != n:
    errors.append(f"{len(front)} front records, want {n}: " + str(
        [(r["req_bytes"], r["resp_bytes"], r.get("status")) for r in front][:20]))
for r in front:
    if (r["protocol"], r.get("tls"), r.get("status")) != ("http2", True, 200):
        errors.append(f"front: {r['protocol']} tls {r.get('tls')} status {r.get('status')}")
if len(calls) != n:
    errors.append(f"{len(calls)} upstream calls, want {n}")
ids = {r["id"] for r in front}
parents = [r.get("parent") for r in calls]
if sorted(p for p in parents if p in ids) != sorted(ids) or len(set(parents)) != n:
    errors.append(f"parents {parents}, front ids {sorted(ids)}")
if errors:
    sys.exit("\n".join(errors))
print(f"ok: {n} front requests over HTTP/2 in TLS, each the parent of its upstream call")
PY
echo PASS
