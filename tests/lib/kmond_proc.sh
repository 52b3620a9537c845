# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Starting and stopping kmond, shared by the tests (tests/lib/kmond.sh) and
# the benchmarks (bench/lib.sh). Sourced; sets and clears KMOND_PID.
#   kmond_launch BIN OUT ERR CONFIG [ARGS...]   runs BIN -c CONFIG ARGS,
#       records to OUT, log to ERR; returns 0 once it logs "running on",
#       1 if it exits first or says nothing for 30 s
#   kmond_terminate                             SIGTERM, waits; returns
#       kmond's exit code

kmond_launch() {
	local bin=$1 out=$2 err=$3 config=$4 i
	shift 4
	# Emptied first: the background start may truncate them only after
	# the first look below, which would then read a previous run's log.
	: >"$out"
	: >"$err"
	"$bin" -c "$config" "$@" >>"$out" 2>>"$err" &
	KMOND_PID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q "running on" "$err" 2>/dev/null && return 0
		kill -0 "$KMOND_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

kmond_terminate() {
	local rc=0
	kill -TERM "$KMOND_PID"
	wait "$KMOND_PID" || rc=$?
	KMOND_PID=
	return $rc
}
