# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The two-tier application of tests/lib/link_svc.py, for the tests of
# request paths; sourced after kmond.sh and tcp_svc.sh.
#   $LINK ROLE ARGS...          runs it (start servers with start_svc)
#   wait_served PORT...         waits (20 s at most) until the servers on
#                               PORTs have closed every connection: a
#                               request's record goes out when the next
#                               one on its connection begins, or at the
#                               close
LINK="python3 $(dirname "${BASH_SOURCE[0]}")/link_svc.py"

wait_served() {
	local filter= p i
	for p in "$@"; do
		filter="${filter:+$filter or }sport = :$p"
	done
	for ((i = 0; i < 200; i++)); do
		[ -z "$(ss -Htn state connected "( $filter )")" ] && return 0
		sleep 0.1
	done
	fail "connections to ports $* still open: $(ss -Htn state connected "( $filter )" | head -3)"
}
