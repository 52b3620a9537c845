#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS read in plaintext where OpenSSL is linked into the program
# (kmt_tls_static, built with libssl.a): its own SSL functions carry the
# uprobes, attached at its exec (it maps no libssl.so.3; it waits 300 ms
# before it connects, the race with a short-lived client is tls_curl's).
# Every request
# is one record per side (nginx the server) with protocol http, tls
# true, the status, method and route.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
CONNS=2
REQS=4
CLIENT=$BUILD/tests/kmt_tls_static
ldd "$CLIENT" | grep -q libssl && fail "kmt_tls_static maps libssl.so.3"

HTTP=$(test_port)
TLS=$(test_port)
tls_cert api.test
nginx_tls $TLS
start_nginx "$HTTP" 1

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { comm: kmt_tls_static } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
for ((i = 0; i < CONNS; i++)); do
	"$CLIENT" 127.0.0.1 "$TLS" api.test $REQS /text 300 >>"$WORK/client.out" ||
		fail "the client failed"
done
sleep 1.2 # two intervals
stop_kmond
expect_eq "the client's answers" "$(sort "$WORK/client.out" | uniq -c | xargs)" \
	"$((CONNS * REQS)) 200"
grep -q "read in plaintext (/proc/[0-9]*/exe)" "$WORK/kmond.err" ||
	fail "not attached to the program: $(grep -i tls "$WORK/kmond.err")"
python3 tests/lib/tls_check.py plain "$WORK/out.json" "$TLS" $CONNS $REQS \
	api.test http 200/false/false/GET//text || fail "statically linked OpenSSL"
