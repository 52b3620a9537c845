#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext through uprobes on OpenSSL 3 (libssl.so.3), both
# ends: nginx serving HTTPS (monitored) and a Python ssl client
# (monitored). Every request is one record per side with protocol http,
# tls true, the ClientHello's server name, and the status, error, method
# and route from the plaintext; nothing for the handshakes. Then with
# collectors.tcp.tls false, and with the uprobes refused by the kernel
# (an optional hook: tcp runs on), the same connections read `tls` as
# before. The uprobes are uprobe_multi links where the kernel has them
# (6.6), else a perf event a probe: both ways are read.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"

need_tls
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

# one run NAME TLS [ENV]: kmond with collectors.tcp.tls TLS (and ENV),
# the client's requests; the records in out.NAME.json
run() {
	local name=$1 tls=$2 env=${3:-} go=$WORK/go.$1
	python3 tests/lib/tls_client.py "$go" 127.0.0.1 "$TLS" api.test \
		$CONNS $REQS http /text /missing/12345 /boom/x /text \
		>"$WORK/client.$name" &
	CLIENT=$!
	STARTED_PIDS+=($CLIENT)
	cat >"$WORK/kmond.$name.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { pid: $CLIENT } }
collectors:
  tcp: { enabled: true, tls: $tls }
YAML
	[ -z "$env" ] || export "${env?}"
	start_kmond "$WORK/kmond.$name.yaml" -v
	[ -z "$env" ] || unset "${env%%=*}"
	if [ "$tls" = true ] && [ "$name" != refused ]; then
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
	mv "$WORK/out.json" "$WORK/out.$name.json"
	mv "$WORK/kmond.err" "$WORK/kmond.$name.err"
}

run on true
# the connection state in a hash, as where the kernel refuses iterators
run hash true KMOND_PROBE_FAIL_LOAD=iter
# uprobe_multi links refused: a perf event per uprobe instead
run perf true KMOND_PROBE_FAIL_LOAD=uprobe_multi
grep -q "tcp: tls: attach with uprobe SSL_write" "$WORK/kmond.perf.err" ||
	fail "not on perf uprobes: $(grep 'tcp: tls' "$WORK/kmond.perf.err")"
run off false
# both ways refused: their program
run refused true KMOND_PROBE_FAIL_LOAD=tls_write_entry
grep -q "tcp: tls off" "$WORK/kmond.refused.err" ||
	fail "no warning for the refused uprobes"

# per path: status/server error/client error/method/route
EXPECT="200/false/false/GET//text 404/false/true/GET//missing/{id}
	503/true/true/GET//boom/x 200/false/false/GET//text"
for name in on hash perf; do
	python3 tests/lib/tls_check.py plain "$WORK/out.$name.json" $TLS \
		$CONNS $REQS api.test http $EXPECT ||
		fail "TLS read in plaintext ($name)"
done
for name in off refused; do
	python3 tests/lib/tls_check.py cipher "$WORK/out.$name.json" $TLS ||
		fail "TLS not read ($name)"
done
