#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# curl monitored as a TLS client of openssl s_server (not monitored), each
# run asking for another server name: every client-side record of a
# connection says `tls` and carries the name its ClientHello sent
# (tls_sni), on every exchange of the connection (the handshake's and the
# request's), not only the first. TLS read in plaintext is off here (the
# connections stay `tls`): tls_nginx.sh tests it.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/caller.sh"

need_tls

TLS=$(test_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=api.test -batch 2>/dev/null ||
	fail "openssl req"
openssl s_server -accept $TLS -4 -key "$WORK/key.pem" -cert "$WORK/cert.pem" \
	-www -quiet >"$WORK/s_server.log" 2>&1 &
STARTED_PIDS+=($!)
for ((i = 0; i < 50; i++)); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $TLS), 0.2)" \
		2>/dev/null && break
	sleep 0.1
done
start_caller
cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: cli, match: { pid: $CALLER_PID } }
collectors:
  tcp: { enabled: true, tls: false }
YAML
start_kmond "$WORK/kmond.yaml"
sleep 0.6 # one interval: the caller is selected

for name in a.test b.test c.test; do
	in_caller $name curl -sk -o /dev/null -o /dev/null \
		--resolve $name:$TLS:127.0.0.1 https://$name:$TLS/ https://$name:$TLS/
done
sleep 1.2 # two intervals
stop_kmond

python3 - "$WORK/out.json" $TLS <<'PY' || fail "tls_sni of the client records"
import collections, json, sys
port = int(sys.argv[2])
names = collections.defaultdict(list)  # client port -> names of its records
for r in map(json.loads, open(sys.argv[1])):
    if r["kind"] == "tcp" and r["rport"] == port:
        if r["side"] != "client" or r["protocol"] != "tls":
            sys.exit(f"record {r['side']} {r['protocol']}: want client tls")
        names[r["lport"]].append(r.get("tls_sni", "-"))
# s_server -www closes after each answer: two connections a run
got = sorted(sorted(set(n)) for n in names.values())
if got != [["a.test"]] * 2 + [["b.test"]] * 2 + [["c.test"]] * 2:
    sys.exit(f"names per connection {got}, want a, b, c.test on two each")
# the handshake's exchange, then the request's
if any(len(n) < 2 for n in names.values()):
    sys.exit(f"a connection with fewer than two exchanges: {dict(names)}")
print("ok:", {p: n for p, n in names.items()})
PY
