# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The loopback test service (tests/lib/tcp_svc.py) for the integration
# tests, sourced after kmond.sh.
#   $SVC client ARGS...        runs its client
#   start_svc NAME CMD...      runs CMD (a "$SVC server ..." line, maybe
#                              behind "ip netns exec NS") in the background
#                              with --ready, waits until it listens; its
#                              pid is in SVC_PID and in STARTED_PIDS
SVC="python3 $(dirname "${BASH_SOURCE[0]}")/tcp_svc.py"
SVC_PID=

start_svc() {
	local name=$1 i
	shift
	"$@" --ready "$WORK/$name.up" &
	SVC_PID=$!
	STARTED_PIDS+=($SVC_PID)
	for ((i = 0; i < 50; i++)); do
		[ -e "$WORK/$name.up" ] && return 0
		sleep 0.1
	done
	fail "server $name did not start"
}
