#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Both ends of a connection older than kmond, monitored on one host, are
# joined: the server names its client and the client its server. The
# client end's state is made by its first send hook, here only when a
# request of 2 MiB through 64 KiB buffers has been read by the server:
# the server, looking for its client at the request's first bytes, does
# not find it yet, and looks once more at its first response (the race
# a preempted client's send loses on PREEMPT_RT). Every call is a client
# record with dst srv, and one edge caller -> srv.
source "$(dirname "$0")/../lib/kmond.sh"
source "$(dirname "$0")/../lib/bulk_peer.sh"

PORT=$(test_port)
CALLS=3
# connects at once, calls when kmond runs
BULK_OLDER=1 bulk_exchange $PORT 300 both --calls $CALLS \
	--request $((2 << 20)) --buf $((64 << 10)) --read-pause 0.002

out=$WORK/out.json
expect_eq "client records" \
	"$($RECORDS "$out" --kind tcp --where service=caller --count)" $CALLS
expect_eq "dst of the client records" \
	"$($RECORDS "$out" --kind tcp --where service=caller --values dst | sort -u)" srv
expect_eq "topology edges" \
	"$($RECORDS "$out" --kind topology --where dst=srv --values src | sort -u)" caller
expect_eq "requests on the edge caller -> srv" \
	"$($RECORDS "$out" --kind topology --where src=caller --where dst=srv --sum requests)" $CALLS
echo "PASS"
