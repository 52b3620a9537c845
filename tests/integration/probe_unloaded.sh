#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --probe says what a collector loads, not only what the kernel has: a
# hook whose choice the collector leaves out is "none loaded", with why
# (bio's rq_requeue where block_io_start follows requests). tcp's
# send-entry hook: without tcp_sendmsg_locked (6.12) sys_enter serves it,
# the state in the sockets too (the entry's time is left per thread for
# the send's return). With the state in the hash (sock_recv_length on its
# plain tracepoint), tcp_sendmsg_locked serves it (protocol
# identification, whose sends its program also reads, is off). Each time
# the programs kmond holds while it runs say the same.
source "$(dirname "$0")/../lib/kmond.sh"

[ -d /sys/kernel/tracing/events/sock/sock_recv_length ] ||
	skip "no sock_recv_length (before 6.3): tcp keeps its state in a hash"
[ -d /sys/kernel/tracing/events/tcp/tcp_sendmsg_locked ] ||
	skip "no tcp_sendmsg_locked tracepoint"
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
collectors:
  tcp: { enabled: true }
YAML
# check DENY PROBE_LINE... -- PROGRAMS: --probe with DENY has each line;
# kmond run with DENY holds exactly PROGRAMS of the send hooks.
check() {
	local deny=$1 want progs
	shift
	KMOND_PROBE_DENY=$deny "$KMOND" --probe >"$WORK/probe" 2>"$WORK/probe.err" ||
		fail "--probe with $deny failed: $(cat "$WORK/probe.err")"
	while [ "$1" != -- ]; do
		grep -Eq "$1" "$WORK/probe" ||
			fail "--probe with $deny has no line /$1/: $(grep '^tcp' "$WORK/probe")"
		shift
	done
	shift
	KMOND_PROBE_DENY=$deny start_kmond "$WORK/kmond.yaml"
	progs=$(prog_names $KMOND_PID | tr ' ' '\n' |
		grep -E '^tcp_send_entry' | tr '\n' ' ')
	stop_kmond
	expect_eq "send programs loaded with $deny" "$progs" "$*"
}
check tp_btf:tcp_sendmsg_locked \
	'^tcp +tcp_sendmsg +raw_tp sys_enter; tp_btf: tcp_sendmsg_locked denied' \
	-- "tcp_send_entry_sys "
check tp_btf:sock_recv_length \
	'^tcp +tcp_sendmsg +tp_btf tcp_sendmsg_locked' \
	-- "tcp_send_entry_btf "
requeue='^bio +rq_requeue +.*' # left out where block_io_start follows requests
[ -d /sys/kernel/tracing/events/block/block_io_start ] &&
	requeue='^bio +rq_requeue +none loaded \(tp_btf block_rq_requeue: block_io_start follows requests\)'
check "" '^tcp +tcp_sendmsg +tp_btf tcp_sendmsg_locked' "$requeue" -- "tcp_send_entry_btf "
