#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext through uprobes on OpenSSL 3 (libssl.so.3), both
# ends: nginx serving HTTPS (monitored) and a Python ssl client
# (monitored). Every request is one record per side with protocol http,
# tls true, the ClientHello's server name, and the status, error, method
# and route from the plaintext; nothing for the handshakes. Then with
# collectors.tcp.tls false: the same connections read `tls` as before.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_protocols
CONNS=3
REQS=5

HTTP=$(test_port)
TLS=$(test_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=api.test -batch 2>/dev/null ||
	fail "openssl req"
NGINX_LOCATIONS="listen 127.0.0.1:$TLS ssl;
		ssl_certificate $WORK/cert.pem;
		ssl_certificate_key $WORK/key.pem;
		location /missing/ { return 404; }
		location /boom/ { return 503; }"
start_nginx "$HTTP" 2

# one run: kmond with TLS on or off, the client's requests, the records
run() {
	local tls=$1 go=$WORK/go.$1
	python3 tests/lib/tls_client.py "$go" 127.0.0.1 "$TLS" api.test \
		$CONNS $REQS /text /missing/12345 /boom/x /text \
		>"$WORK/client.$tls" &
	CLIENT=$!
	STARTED_PIDS+=($CLIENT)
	cat >"$WORK/kmond.$tls.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { pid: $CLIENT } }
collectors:
  tcp: { enabled: true, tls: $tls }
YAML
	start_kmond "$WORK/kmond.$tls.yaml" -v
	if [ "$tls" = true ]; then
		# the client's and both workers' uprobes (the master maps
		# libssl too)
		for ((i = 0; i < 50; i++)); do
			[ "$(grep -c "read in plaintext" "$WORK/kmond.err")" -ge 3 ] &&
				break
			sleep 0.1
		done
		grep "read in plaintext" "$WORK/kmond.err" | grep -q "pid $CLIENT " ||
			fail "the client was not attached: $(grep -i tls "$WORK/kmond.err")"
	else
		sleep 1
	fi
	touch "$go"
	wait $CLIENT || fail "the client failed"
	sleep 1.2 # two intervals
	stop_kmond
	mv "$WORK/out.json" "$WORK/out.$tls.json"
	mv "$WORK/kmond.err" "$WORK/kmond.$tls.err"
}

run true
run false

python3 - "$WORK" $TLS $CONNS $REQS <<'PY' || fail "TLS records"
import collections, json, sys
work, port, conns, reqs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def records(tls):
    out = []
    for r in map(json.loads, open(f"{work}/out.{tls}.json")):
        if r["kind"] == "tcp" and port in (r["lport"], r["rport"]):
            out.append(r)
    return out

paths = ["/text", "/missing/12345", "/boom/x", "/text"]
want = [p for i in range(conns * reqs) for p in [paths[i % len(paths)]]]
status = {"/text": 200, "/missing/12345": 404, "/boom/x": 503}
route = {"/text": "/text", "/missing/12345": "/missing/{id}", "/boom/x": "/boom/x"}
errors = []
on = records("true")
for side in ("server", "client"):
    rs = sorted((r for r in on if r["side"] == side), key=lambda r: r["ts"])
    if len(rs) != conns * reqs:
        errors.append(f"{side}: {len(rs)} records, want {conns * reqs}: "
                      + str(collections.Counter((r['protocol'], r.get('status')) for r in rs)))
        continue
    by_conn = collections.defaultdict(list)
    for r in rs:
        by_conn[r["lport"] if side == "client" else r["rport"]].append(r)
    if sorted(len(v) for v in by_conn.values()) != [reqs] * conns:
        errors.append(f"{side}: requests per connection "
                      f"{sorted(len(v) for v in by_conn.values())}")
    got = collections.Counter()
    for r in rs:
        if r["protocol"] != "http" or r.get("tls") is not True:
            errors.append(f"{side}: protocol {r['protocol']} tls {r.get('tls')}")
            break
        if r.get("tls_sni") != "api.test":
            errors.append(f"{side}: tls_sni {r.get('tls_sni')}")
            break
        got[(r.get("status"), r.get("error"), r.get("method"), r.get("route"))] += 1
    exp = collections.Counter()
    for p in want:
        s = status[p]
        exp[(s, s >= (400 if side == "client" else 500), "GET", route[p])] += 1
    if got != exp:
        errors.append(f"{side}: outcomes {dict(got)}, want {dict(exp)}")
off = records("false")
for side in ("server", "client"):
    rs = [r for r in off if r["side"] == side]
    if not rs or any(r["protocol"] != "tls" or "tls" in r for r in rs):
        errors.append(f"tls off, {side}: "
                      + str(collections.Counter((r['protocol'], r.get('tls')) for r in rs)))
if errors:
    for r in on[:12]: print(json.dumps({k: r.get(k) for k in ("side","lport","rport","req_bytes","resp_bytes","req_seq","resp_seq","status","method","tid")}), file=sys.stderr)
    sys.exit("\n".join(errors))
print("ok:", len(on), "records with TLS read,", len(off), "without")
PY
