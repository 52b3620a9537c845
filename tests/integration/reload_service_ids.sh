#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Kernel state counted before a reload keeps its service: calls counted
# for service b, read only after a SIGHUP that reorders the services (and
# drops one), still come out under b, not under whichever service took
# b's place in the file.
source "$(dirname "$0")/../lib/kmond.sh"

cp "$BUILD/tests/kmt_getppid" "$WORK/kmt_b"
write_config() {
	{
		echo "interval: 2s"
		echo "services:"
		for s in "$@"; do echo "  - { name: $s, match: { comm: kmt_$s } }"; done
		echo "collectors:"
		echo "  syscall: { enabled: true, syscalls: [getppid] }"
	} >"$WORK/kmond.yaml"
}
write_config a b
start_kmond "$WORK/kmond.yaml"
"$WORK/kmt_b" 1234 &
b=$!
wait $b
write_config b c
kill -HUP $KMOND_PID
wait_for_log "reloaded" || fail "no reload"
sleep 2.2 # the interval that reads the calls
stop_kmond

expect_eq "service of b's calls" \
	"$($RECORDS "$WORK/out.json" --kind syscall --where pid=$b --values service | sort -u)" b
expect_eq "b's calls" "$($RECORDS "$WORK/out.json" --kind syscall --where pid=$b --sum count)" 1234
