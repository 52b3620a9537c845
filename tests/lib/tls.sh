# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# TLS servers' pieces for the tests (sourced after kmond.sh).
#   tls_cert CN [DIR]      a self-signed certificate for CN: DIR/cert.pem
#                          and DIR/key.pem (DIR: $WORK)
#   nginx_tls PORT...      sets NGINX_LOCATIONS to listen with TLS on each
#                          PORT ("PORT http2" for HTTP/2 too), with the
#                          certificate tls_cert made in $WORK
#   tls_wait_attached PID...  waits until kmond attached each PID's uprobes
#   tls_kmond_on_nginx     starts kmond with the tcp collector on nginx
#                          (start_nginx's), its workers' TLS attached

tls_cert() {
	local dir=${2:-$WORK}
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" \
		-out "$dir/cert.pem" -days 2 -subj "/CN=$1" -batch 2>/dev/null ||
		fail "openssl req"
}

nginx_tls() {
	local port
	NGINX_LOCATIONS="ssl_certificate $WORK/cert.pem;
		ssl_certificate_key $WORK/key.pem;"
	for port in "$@"; do
		set -- $port
		NGINX_LOCATIONS+="
		listen 127.0.0.1:$1 ssl ${2:-};"
	done
}

# tls_wait_attached PID...: waits until kmond has attached each PID's TLS
# uprobes ("TLS of pid PID read in plaintext" in its log), or fails.
tls_wait_attached() {
	local i pid missing
	for ((i = 0; i < 50; i++)); do
		missing=
		for pid in "$@"; do
			grep -q "TLS of pid $pid read in plaintext" "$WORK/kmond.err" ||
				missing+=" $pid"
		done
		[ -z "$missing" ] && return
		sleep 0.1
	done
	fail "pids$missing not attached: $(grep -i tls "$WORK/kmond.err")"
}

# tls_kmond_on_nginx: kmond (interval 500 ms) with the tcp collector on
# the service web, nginx's processes; returns once it reads nginx's
# workers' TLS in plaintext.
tls_kmond_on_nginx() {
	cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
collectors:
  tcp: { enabled: true }
YAML
	start_kmond "$WORK/kmond.yaml" -v
	tls_wait_attached $(pgrep -P "$NGINX_PID")
}
