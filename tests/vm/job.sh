#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One kernel's share of the matrix, in a guest or on the host: the kernel
# release, `kmond --probe` (the attach chosen per hook) and the tests.
#   tests/vm/job.sh BUILD_DIR FILTER OUT_DIR [LEAVE_OUT]
# LEAVE_OUT: tests/run's TESTS_LEAVE_OUT (a guest gets no environment).
# Exits with tests/run's exit code.
set -u
build=$1
filter=$2
out=$3
[ -n "${4:-}" ] && export TESTS_LEAVE_OUT=$4
mkdir -p "$out"
uname -r >"$out/uname"
"$build/kmond" --probe >"$out/probe.txt" 2>&1 || echo "kmond --probe failed: $?" >>"$out/probe.txt"
# In a guest (no KVM: execs ~80 ms, BPF loads 10-25x slower) each test
# gets three times its limit; an arm64 guest, whose every instruction is
# translated, six times.
if [ "$out" = /run/vmtest ]; then
	export TEST_TIME_SCALE=3
	[ "$(uname -m)" = aarch64 ] && TEST_TIME_SCALE=6
fi
tests/run "$build" "$filter" 2>&1 | tee "$out/tests.txt"
exit "${PIPESTATUS[0]}"
