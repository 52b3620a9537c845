# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared by the integration tests: start kmond, stop it, clean up what a
# test started (by pid), and assert. Sourced; $BUILD is the build dir.
set -u

source "$(dirname "${BASH_SOURCE[0]}")/kmond_proc.sh"

BUILD=${BUILD:-build}
KMOND=$BUILD/kmond
RECORDS="python3 $(dirname "${BASH_SOURCE[0]}")/records.py"
BIO_SHORT="python3 $(dirname "${BASH_SOURCE[0]}")/bio_short.py"
WORK=$(mktemp -d /tmp/kmond-test.XXXXXX)
STARTED_PIDS=()
KMOND_PID=
# The outermost kernel frame of a system call on this architecture, where
# the kernel frames of a block in a syscall end and the user frames
# begin (for the checkers in Python too).
case "$HOSTTYPE" in
aarch64) SYSCALL_ENTRY_FRAME=el0t_64_sync+ ;; # not el0t_64_sync_handler
*) SYSCALL_ENTRY_FRAME=entry_SYSCALL ;;
esac
export SYSCALL_ENTRY_FRAME

# end_started: ends what this shell started (STARTED_PIDS, kmond)
end_started() {
	local pid
	for pid in "${STARTED_PIDS[@]}" $KMOND_PID; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${STARTED_PIDS[@]}" $KMOND_PID; do
		wait "$pid" 2>/dev/null
	done
}

cleanup() {
	end_started
	# TESTS_KEEP=DIR: a test's records and logs kept for a look after
	if [ -n "${TESTS_KEEP:-}" ]; then
		mkdir -p "$TESTS_KEEP" && cp -r "$WORK" "$TESTS_KEEP/"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	if [ -f "$WORK/kmond.err" ]; then
		echo "--- kmond log:" >&2
		tail -20 "$WORK/kmond.err" >&2
	fi
	exit 1
}

# side_by_side FUNC...: runs the FUNCs at once, each in a subshell of its
# own, for parts of a test that mostly wait and share nothing but $WORK
# (and its broker): each part's output is printed once it ended, what it
# started (STARTED_PIDS) is ended with it, and a failed part fails the
# test after all ended (a skipped part is said; when every part skipped,
# the test skips). Its variables stay in its subshell.
side_by_side() {
	local part rc failed=() skipped=()
	declare -A pid_of
	for part in "$@"; do
		(
			STARTED_PIDS=() KMOND_PID=
			trap end_started EXIT
			"$part"
		) >"$WORK/part-$part.log" 2>&1 &
		pid_of[$part]=$!
	done
	for part in "$@"; do
		rc=0
		wait "${pid_of[$part]}" || rc=$?
		case $rc in
		0) ;;
		77) skipped+=("$part") ;;
		*) failed+=("$part") ;;
		esac
		cat "$WORK/part-$part.log"
	done
	[ ${#failed[@]} -eq 0 ] || fail "parts failed: ${failed[*]}"
	[ ${#skipped[@]} -lt $# ] || skip "every part skipped: ${skipped[*]}"
	[ ${#skipped[@]} -eq 0 ] || echo "parts skipped: ${skipped[*]}"
}

# start_kmond CONFIG [ARGS...]: records go to $WORK/out.json, the log to
# $WORK/kmond.err; returns once kmond says it is running.
start_kmond() {
	kmond_launch "$KMOND" "$WORK/out.json" "$WORK/kmond.err" "$@" ||
		fail "kmond did not start"
}

# test_port [N]: a loopback port P (P .. P+N-1 for N ports) that can be
# bound now on 127.0.0.1 and ::1, below the ephemeral range, so no client
# socket of another test can take it before the server binds it.
test_port() {
	python3 - "${1:-1}" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    top = int(f.read().split()[0]) - n
for _ in range(1000):
    p = random.randrange(20000, top)
    socks = []
    try:
        for q in range(p, p + n):
            for fam, addr in ((socket.AF_INET, "127.0.0.1"),
                              (socket.AF_INET6, "::1")):
                s = socket.socket(fam)
                socks.append(s)
                s.bind((addr, q))
        print(p)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
PY
}

# wait_port PORT [SECONDS]: waits until something accepts on
# 127.0.0.1:PORT (default 30 s); 1 when nothing did.
wait_port() {
	local i
	for ((i = 0; i < ${2:-30} * 5; i++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" \
			2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# wait_for_log TEXT [SECONDS]: waits until kmond's log holds TEXT.
wait_for_log() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		grep -q -- "$1" "$WORK/kmond.err" 2>/dev/null && return 0
		kill -0 "$KMOND_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_for_log_count TEXT N: waits until kmond's log holds TEXT N times
# (a collector started again by a reload logs "running" a second time).
wait_for_log_count() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(grep -c -- "$1" "$WORK/kmond.err")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# stop_kmond: SIGTERM, then checks the exit code is 0.
stop_kmond() {
	local rc=0
	kmond_terminate || rc=$?
	[ "$rc" -eq 0 ] || fail "kmond exited with $rc after SIGTERM"
}

# skip REASON: this kernel lacks what the test needs (a tracepoint, an
# attach method); REASON names it. tests/run counts the test as skipped.
skip() {
	echo "SKIP: $*"
	exit 77
}

# need_protocols: skips a test of protocol identification where the
# kernel cannot have it: it reads the connection state kmond keeps in the
# sockets, which needs every tcp hook on tp_btf (sock_*_length: 6.3).
# probe_has PATTERN: whether a line of `kmond --probe` matches PATTERN
# (grep -E). --probe loads every program (1.3 s here): asked once a test,
# its answer kept in $WORK (a test that changes KMOND_PROBE_DENY or
# _FAIL_LOAD later runs --probe itself).
probe_has() {
	[ -s "$WORK/kmond.probe" ] ||
		"$KMOND" --probe >"$WORK/kmond.probe" 2>/dev/null
	grep -Eq "$1" "$WORK/kmond.probe"
}

need_protocols() {
	probe_has '^tcp +sock_recv +tp_btf' ||
		skip "no tp_btf sock_recv_length (6.3): tcp on its syscall fallback identifies no protocols"
}

# tls_in_plaintext: whether kmond reads TLS in plaintext here, which
# takes protocol identification (tp_btf sock_recv_length, 6.3) and the
# sends' bytes at tcp_sendmsg_locked's tp_btf (6.13).
tls_in_plaintext() {
	probe_has '^tcp +sock_recv +tp_btf' &&
		probe_has '^tcp +tcp_sendmsg +tp_btf'
}

need_tls() {
	tls_in_plaintext ||
		skip "TLS is not read in plaintext: no tp_btf sock_recv_length (6.3) or tcp_sendmsg_locked (6.13)"
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	echo "ok: $1 = $3"
}

# prog_ids PID: the ids of the BPF programs a process holds, sorted.
prog_ids() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -n | tr '\n' ' '
}

# prog_names PID: the names of the BPF programs a process holds, sorted.
prog_names() {
	local id
	for id in $(prog_ids "$1"); do
		bpftool prog show id "$id" -j 2>/dev/null |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])'
	done | sort -u | tr '\n' ' '
}

# map_dump PID NAME: bpftool's JSON dump of the BPF map NAME a process
# holds (with its BTF: each entry's "formatted" key and value), or
# nothing and a status of 1 when it holds none.
map_dump() {
	local id
	for id in $(grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
		if bpftool map show id "$id" 2>/dev/null | grep -q " name $2 "; then
			bpftool map dump id "$id" -j
			return
		fi
	done
	return 1
}

# map_entries PID NAME: the number of entries in the BPF map NAME a
# process holds.
map_entries() {
	local dump
	dump=$(map_dump "$1" "$2") || { echo "no map $2"; return; }
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' <<<"$dump"
}
