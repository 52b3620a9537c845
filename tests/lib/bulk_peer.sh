# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One exchange of tests/lib/bulk_peer.py (large requests or answers
# through small socket buffers) with kmond watching, for the integration
# tests of where a send begins; sourced after kmond.sh.
#   bulk_exchange PORT INTERVAL_MS WHO OPTS...
# starts bulk_peer.py's server on PORT and its client (OPTS for both),
# kmond with tcp on, protocols off, every INTERVAL_MS, the service srv
# the server and, with WHO both (not server), the service caller the
# client; lets the calls go once kmond has selected the pids, waits for
# both ends, stops kmond two intervals later: records in $WORK/out.json.
# BULK_OLDER=1: the client connects before kmond starts (a connection
# older than kmond), its calls waiting for kmond.
BULK_PEER="python3 $(dirname "${BASH_SOURCE[0]}")/bulk_peer.py"

bulk_exchange() {
	local port=$1 ms=$2 who=$3 server client
	shift 3
	$BULK_PEER server $port "$WORK/listening" "$@" &
	server=$!
	STARTED_PIDS+=($server)
	for _ in $(seq 50); do [ -e "$WORK/listening" ] && break; sleep 0.1; done
	if [ "${BULK_OLDER:-0}" = 1 ]; then
		$BULK_PEER client $port "$WORK/listening" "$@" --hold "$WORK/go" &
	else
		$BULK_PEER client $port "$WORK/go" "$@" &
	fi
	client=$!
	STARTED_PIDS+=($client)
	[ "${BULK_OLDER:-0}" = 1 ] && sleep 0.3 # connected
	{
		echo "interval: ${ms}ms"
		echo "services:"
		echo "  - { name: srv, match: { pid: $server } }"
		[ "$who" = both ] && echo "  - { name: caller, match: { pid: $client } }"
		echo "collectors:"
		echo "  tcp: { enabled: true, protocols: false }"
	} >"$WORK/kmond.yaml"
	start_kmond "$WORK/kmond.yaml"
	sleep "$(awk -v ms=$ms 'BEGIN { print (ms + 100) / 1000 }')" # the pids selected
	touch "$WORK/go"
	wait $client || fail "the client failed"
	wait $server || fail "the server failed"
	sleep "$(awk -v ms=$ms 'BEGIN { print (2 * ms + 200) / 1000 }')" # two intervals
	stop_kmond
}
