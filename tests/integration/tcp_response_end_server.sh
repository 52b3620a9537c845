#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A server's response ends at the entry of its last send also when kmond
# follows no client connection (its client is a process it does not
# monitor): the send-entry program looks up no socket only while no
# connection at all is followed. One answer of 32 MiB in one send through
# 16 KiB socket buffers, read by its client 300 ms after the request:
# the server's latency ends when that send began, well before the
# client's read lets it return.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/bulk_peer.sh"

"$KMOND" --probe 2>/dev/null | grep -Eq '^tcp +tcp_sendmsg +(tp_btf|raw_tp) ' ||
	skip "no send-entry hook loads on this kernel: sends are stamped when they return"
PORT=$(test_port)
bulk_exchange $PORT 300 server --answer $((32 << 20)) --buf $((16 << 10)) \
	--reply-pause 0.3

got=$($RECORDS "$WORK/out.json" --where kind=tcp --where side=server \
	--where lport=$PORT --count)
expect_eq "server records of the answer" "$got" 1
server=$($RECORDS "$WORK/out.json" --where kind=tcp --where side=server \
	--where lport=$PORT --sum latency_ns)
client=$($RECORDS "$WORK/out.json" --where kind=tcp --where side=client \
	--where rport=$PORT --count)
expect_eq "client records (the client is not monitored)" "$client" 0
echo "server latency $server ns"
[ "$server" -lt 100000000 ] ||
	fail "the server's latency ($server ns) ends when its send returned, not when it began"
echo "PASS"
