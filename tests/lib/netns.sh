# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Hosts for multi-node tests: network namespaces plugged into one bridge
# (itself in a namespace), and namespaces of their own (a container's),
# all deleted when the test exits, after kmond.sh's cleanup has ended the
# processes that live in them.
#   netns_bridge NETNS          the switch
#   netns_host NETNS ADDR       a host with eth0 = ADDR/24 on the switch
#   netns_alone NETNS           a namespace with only lo, up
NETNS_MADE=()
netns_cleanup() {
	local ns
	for ns in "${NETNS_MADE[@]}"; do ip netns del "$ns" 2>/dev/null; done
}
trap 'cleanup; netns_cleanup' EXIT

netns_bridge() {
	ip netns add "$1" || fail "cannot create netns $1"
	NETNS_MADE+=("$1")
	NETNS_SWITCH=$1
	ip -n "$1" link add br0 type bridge && ip -n "$1" link set br0 up ||
		fail "cannot make the bridge"
}

netns_alone() {
	ip netns add "$1" || fail "cannot create netns $1"
	NETNS_MADE+=("$1")
	ip -n "$1" link set lo up || fail "cannot bring lo up in $1"
}

netns_host() {
	local port=p${#NETNS_MADE[@]}
	ip netns add "$1" || fail "cannot create netns $1"
	NETNS_MADE+=("$1")
	ip -n "$NETNS_SWITCH" link add $port type veth peer name eth0 netns "$1" &&
		ip -n "$NETNS_SWITCH" link set $port master br0 up &&
		ip -n "$1" addr add "$2/24" dev eth0 &&
		ip -n "$1" link set eth0 up && ip -n "$1" link set lo up ||
		fail "cannot wire $1"
}
