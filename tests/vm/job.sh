#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One kernel's share of the matrix, in a guest or on the host: the kernel
# release, `kmond --probe` (the attach chosen per hook) and the tests.
#   tests/vm/job.sh BUILD_DIR FILTER OUT_DIR
# Exits with tests/run's exit code.
set -u
build=$1
filter=$2
out=$3
mkdir -p "$out"
uname -r >"$out/uname"
"$build/kmond" --probe >"$out/probe.txt" 2>&1 || echo "kmond --probe failed: $?" >>"$out/probe.txt"
# In a guest (no KVM: execs ~80 ms, BPF loads 10-25x slower) each test
# gets three times its limit.
[ "$out" = /run/vmtest ] && export TEST_TIME_SCALE=3
tests/run "$build" "$filter" 2>&1 | tee "$out/tests.txt"
exit "${PIPESTATUS[0]}"
