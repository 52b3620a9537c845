#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# With services configured, only their I/O counts: a dd started by a
# selected process is counted under its service, a dd beside it that no
# selector names is not counted at all.
source "$(dirname "$0")/../lib/kmond.sh"

MIB=$((1024 * 1024))
# The selected process (a pid selector: it and what it starts) waits for
# the go file, then becomes dd.
bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	exec dd if=/dev/zero of="$1/mine" bs=1M count=32 oflag=direct 2>/dev/null' \
	_ "$WORK" &
mine=$!
STARTED_PIDS+=($mine)
cat >"$WORK/kmond.yaml" <<YAML
interval: 300ms
services:
  - name: writer
    match: { pid: $mine }
collectors:
  bio: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
dd if=/dev/zero of="$WORK/other" bs=1M count=16 oflag=direct 2>/dev/null &
other=$!
touch "$WORK/go"
wait $mine || fail "selected dd failed"
wait $other || fail "other dd failed"
sleep 0.8
stop_kmond

out=$WORK/out.json
got=$($RECORDS "$out" --kind bio --where pid=$mine --where op=write --sum bytes)
expect_eq "bytes written by the selected dd" "$got" $((32 * MIB))
got=$($RECORDS "$out" --kind bio --where pid=$mine --values service | sort -u)
expect_eq "its service" "$got" writer
got=$($RECORDS "$out" --kind bio --where pid=$mine --values comm | sort -u)
expect_eq "its comm" "$got" dd
got=$($RECORDS "$out" --kind bio --where pid=$other --count)
expect_eq "records of the dd no service selects" "$got" 0
got=$($RECORDS "$out" --kind bio --where service=null --count)
expect_eq "records without a service" "$got" 0
