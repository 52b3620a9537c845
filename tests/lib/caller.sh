# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A caller for the client-side tests (sourced after kmond.sh): a shell
# that a test's config selects by pid and that runs each command it is
# given, so every client it starts is monitored from its first syscall
# (a pid selector takes the processes a process starts).
#   start_caller [PREFIX...]  starts it (behind PREFIX, e.g. "ip netns
#                          exec NS", which must exec); sets CALLER_PID
#   in_caller NAME CMD...  runs CMD in it and waits; CMD's stdout is in
#                          $WORK/NAME.out; fails the test if CMD fails

start_caller() {
	mkfifo "$WORK/caller.fifo" || fail "cannot make the caller's fifo"
	"$@" bash -c 'while read -r line; do eval "$line"; done' \
		<"$WORK/caller.fifo" &
	CALLER_PID=$!
	STARTED_PIDS+=($CALLER_PID)
	exec {CALLER_FD}>"$WORK/caller.fifo"
}

in_caller() {
	local name=$1 i
	shift
	echo "$* >'$WORK/$name.out'; echo \$? >'$WORK/$name.rc'" >&$CALLER_FD
	for ((i = 0; i < 1200; i++)); do
		[ -s "$WORK/$name.rc" ] && break
		sleep 0.05
	done
	[ "$(cat "$WORK/$name.rc" 2>/dev/null)" = 0 ] ||
		fail "$name in the caller failed: $*"
}
