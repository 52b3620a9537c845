#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: exact attach counts of every curl on the host
# TLS read in plaintext from a short-lived client's first SSL call: each
# curl run (a comm selector: monitored from its exec) is attached as it
# starts, to the libssl.so.3 its dynamic linker is about to map. A run
# attached before its first SSL call is read in plaintext (protocol http
# or http2, tls true); one that ends first (a curl run lives ~10 ms here,
# the attach takes 6-17 ms) is counted in tls_gone_unattached and reads
# `tls`: every run is one or the other. Every other run waits 0.3 s for
# its URL (curl --config -), attached by then: those are read whole. nginx, attached from the start,
# serves HTTP/1.1 on one port (every request one record, in plaintext,
# with its status) and HTTP/2 on another (http2, tls true, one record
# a run, with its status).
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/nginx.sh"
source "$(dirname "$0")/../lib/tls.sh"

need_tls
RUNS=12

HTTP=$(test_port)
H1=$(test_port)
H2=$(test_port)
tls_cert api.test
nginx_tls $H1 "$H2 http2"
start_nginx "$HTTP" 1

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
services:
  - { name: web, match: { comm: nginx } }
  - { name: cli, match: { comm: curl } }
collectors:
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml" -v
# every other run waits 0.3 s for its URL on stdin (curl --config -):
# attached by then, it is read whole; the others race the attach
url_after() { # DELAY PORT
	sleep "$1"
	echo "url = \"https://api.test:$2/text\""
}
for ((i = 0; i < RUNS; i++)); do
	for v in "--http1.1 $H1" "--http2 $H2"; do
		set -- $v
		delay=0.3
		((i % 2)) && delay=0
		url_after $delay "$2" |
			curl -sk "$1" -o /dev/null \
				-w '%{http_version} %{http_code}\n' \
				--resolve "api.test:$2:127.0.0.1" --config - \
				>>"$WORK/curl.out" || fail "curl $1 failed"
		# apart: with perf-event uprobes (the fallback), detaching
		# the last one's held an attach ~170 ms (tls.md)
		sleep 0.4
	done
done
sleep 1.2 # two intervals
stop_kmond
expect_eq "curl's answers" "$(sort "$WORK/curl.out" | uniq -c | xargs)" \
	"$RUNS 1.1 200 $RUNS 2 200"

# nginx, attached from the start: every request exactly, in plaintext.
# curl: each run is attached as it starts, or gone before the attach and
# counted so (tls_gone_unattached); an attached run is read in plaintext,
# the others read `tls`.
python3 - "$WORK/out.json" "$H1" "$H2" $RUNS <<'PY' || fail "curl inside TLS"
import collections, json, sys
recs = list(map(json.loads, open(sys.argv[1])))
h1, h2, runs = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stats = [r["collectors"]["tcp"] for r in recs if r["kind"] == "stats"][-1]
def tcp(port, side):
    return [r for r in recs if r["kind"] == "tcp" and r["side"] == side
            and port in (r["lport"], r["rport"])]
def kinds(rs):
    return collections.Counter((r["protocol"], r.get("tls"), r.get("status"))
                               for r in rs)
errors = []
want = {("http", True, 200): runs}
if kinds(tcp(h1, "server")) != want:
    errors.append(f"nginx, HTTP/1.1: {kinds(tcp(h1, 'server'))}")
# one exchange a connection: the SETTINGS, their ACKs and WINDOW_UPDATEs
# are no request of their own (outcomes.md, HTTP/2), and the status is
# read past them. Each read of nginx's takes the preface's news: when
# the HEADERS came in a socket read of their own before nginx wrote
# again, their head was lost (1 or 2 runs of 12, 4 under ASan)
want = {("http2", True, 200): runs}
if kinds(tcp(h2, "server")) != want:
    errors.append(f"nginx, HTTP/2: {kinds(tcp(h2, 'server'))}")
# a run attached after its handshake reads it as `tls`, then its
# plaintext (docs/design/tls.md): partly read, never a wrong name
read = collections.Counter()
for port, proto in ((h1, "http"), (h2, "http2")):
    for pid in {r["pid"] for r in tcp(port, "client")}:
        mine = kinds(r for r in tcp(port, "client") if r["pid"] == pid)
        plain = {k[0] for k in mine if k[1]}
        if plain - {proto, "unknown"}:
            errors.append(f"curl {pid}: {mine}")
        read[proto] += plain == {proto} and all(k[1] for k in mine)
started = stats["tls_attached_at_start"] + stats["tls_gone_unattached"]
if started != 2 * runs:
    errors.append(f"runs attached or gone: {started}, want {2 * runs}")
# the runs that waited for their URL were attached before their first
# SSL call: at least those are read whole
if read["http"] < runs // 2 or read["http2"] < runs // 2:
    errors.append(f"curl runs read whole in plaintext: {dict(read)}, "
                  f"want at least {runs // 2} each")
if errors:
    sys.exit("\n".join(errors))
print(f"ok: curl runs read whole in plaintext {dict(read)} of {runs} each; "
      f"attached at start {stats['tls_attached_at_start']}, gone before "
      f"{stats['tls_gone_unattached']}")
PY
grep "attached .* after it started" "$WORK/kmond.err" |
	awk '{ print $(NF - 4) }' | sort -n | xargs echo "attach delays (us):"
