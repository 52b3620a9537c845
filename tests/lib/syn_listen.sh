# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A listener whose socket filter drops every SYN (kmt_syn listen), for
# the drop tests: its drops are SOCKET_FILTER, owned by it.
#   syn_listen NETNS BINARY ADDR PORT
# starts BINARY (a copy of kmt_syn, named as the test selects it) in
# NETNS, waits until it listens on ADDR:PORT; its pid in STARTED_PIDS.
syn_listen() {
	local ns=$1 bin=$2 addr=$3 port=$4 ready i
	ready=$WORK/ready.$(basename "$bin").$port
	ip netns exec "$ns" "$bin" listen "$addr" "$port" >"$ready" &
	STARTED_PIDS+=($!)
	for ((i = 0; i < 50; i++)); do
		grep -q ready "$ready" && return 0
		sleep 0.1
	done
	fail "$(basename "$bin") did not listen on $addr $port"
}
