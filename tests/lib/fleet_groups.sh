# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The rebalances a consumer group of kmon-trace or kmon-topo --fleet goes
# through in its test, over a stream published in three parts. The test
# defines member GROUP NAME, publish GROUP PART, settle (a rebalance's
# time) and stop NAME; WAIT... is its command that returns once the
# group read everything.

# group_joined GROUP A B WAIT...: A reads the first part alone, B joins
# while A holds it open, both read the rest
group_joined() {
	local g=$1 a=$2 b=$3
	shift 3
	member "$g" "$a"
	publish "$g" 1
	settle
	member "$g" "$b"
	publish "$g" 2
	settle
	publish "$g" 3
	"$@"
	stop "$a"
	stop "$b"
}

# group_joined_left GROUP C D E WAIT...: C and D read the first part, E
# joins for the second, D leaves before the third
group_joined_left() {
	local g=$1 c=$2 d=$3 e=$4
	shift 4
	member "$g" "$c"
	member "$g" "$d"
	publish "$g" 1
	settle
	member "$g" "$e"
	publish "$g" 2
	settle
	stop "$d"
	publish "$g" 3
	"$@"
	stop "$c"
	stop "$e"
}
