#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What the kernel's verifier walks to load kmond's programs (-v: one
# "verified in N instructions" line per program) stays well inside its
# limit of 1,000,000 a program: at most a quarter of it for any program,
# and at most the limit for the shipped config's whole start. The tcp
# collector's read hook once took 771,016 (its helpers inlined at every
# path to them) and a start about 2,400,000, 3.7 s of CPU here: a change
# that multiplies a program's paths fails here, not on a user's kernel
# where the margin is smaller. Three starts: the shipped config as this kernel
# attaches it, then with the fallbacks older kernels take (tp_btf
# refused: tracepoints; the socket tracepoints of 6.3 refused: tcp's
# reads and sends at the syscalls, on raw_tp).
source "$(dirname "$0")/../lib/kmond.sh"

PROGRAM_MOST=250000
START_MOST=1000000
sed 's|path: "-"|path: "/dev/null"|' \
	"$(dirname "$0")/../../configs/kmond.yaml" >"$WORK/kmond.yaml"

# verified DENY: starts kmond -v with KMOND_PROBE_DENY=DENY; the
# "COLLECTOR PROGRAM N" of each program it loaded into $WORK/verified.
verified() {
	KMOND_PROBE_DENY=$1 "$KMOND" -c "$WORK/kmond.yaml" -v --duration 0.2 \
		>/dev/null 2>"$WORK/kmond.err" || fail "kmond (deny '$1') failed"
	sed -nE 's/^kmond: ([a-z_]+): ([a-z0-9_]+) verified in ([0-9]+) instructions$/\1 \2 \3/p' \
		"$WORK/kmond.err" >"$WORK/verified"
	grep -q '^tcp tcp_recv_' "$WORK/verified" ||
		fail "deny '$1': no tcp read hook among the programs verified: $(cat "$WORK/verified")"
}

# within DENY: each program at most PROGRAM_MOST
within() {
	local over
	over=$(awk -v most=$PROGRAM_MOST '$3 > most' "$WORK/verified")
	[ -z "$over" ] || fail "deny '$1': over $PROGRAM_MOST instructions: $over"
	echo "ok: deny '$1': $(wc -l <"$WORK/verified") programs, the largest" \
		"$(sort -k3,3n "$WORK/verified" | tail -1)"
}

verified ""
within ""
total=$(awk '{ s += $3 } END { print s }' "$WORK/verified")
[ "$total" -le $START_MOST ] ||
	fail "the shipped config's start walked $total instructions, over $START_MOST"
echo "ok: the shipped config's start walked $total instructions"
verified tp_btf
within tp_btf
grep -q '^tcp tcp_recv_tp ' "$WORK/verified" ||
	fail "tp_btf refused: the read hook is not the tracepoint's: $(grep '^tcp' "$WORK/verified")"
before_6_3=sock_recv_length,sock/sock_recv_length,sock_send_length
before_6_3+=,sock/sock_send_length,tcp_sendmsg_locked
verified $before_6_3
within $before_6_3
grep -q '^tcp tcp_recv_sys ' "$WORK/verified" ||
	fail "$before_6_3 refused: the read hook is not raw_tp's: $(grep '^tcp' "$WORK/verified")"
