#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest: the tests on each kernel in turn, then one summary table
# (per kernel and collector: the attach kmond chose, tests passed, failed
# and skipped) and the wall time per kernel.
#   tests/vm/matrix.sh BUILD_DIR FILTER KERNEL...
# KERNEL is "host" (this machine's kernel) or a name tests/vm/kernel.sh
# knows (6.1, 6.1-rt, 6.12, 6.1-arm64). Results stay in
# BUILD_DIR/vmtest/results/ (or VMTEST_RESULTS). An arm64 kernel runs the
# cross-built tree, VMTEST_ARM64_BUILD (build-arm64), and the tests
# VMTEST_ARM64_FILTER picks (the Makefile's core set; FILTER otherwise)
# but VMTEST_ARM64_LEAVE_OUT; its kernel and root are cached there.
set -u
cd "$(dirname "$0")/../.."
build=$1
filter=$2
shift 2
results=${VMTEST_RESULTS:-$build/vmtest/results}
rc=0
# The guests have no network: the npm package the trace tests read is
# installed here first, into the build dir they see read-only.
if [ -n "$(printf '%s\n' "$@" | grep -v -e '^host$' -e '-arm64$')" ]; then
	BUILD=$build bash -c 'source tests/lib/kmond.sh && source tests/lib/otlp.sh && otlp_setup' ||
		echo "vmtest: the OTLP package is not installed; the trace tests will fail in guests"
fi
for k in "$@"; do
	out=$results/$k
	rm -rf "$out"
	mkdir -p "$out"
	echo "=== $k"
	start=$SECONDS
	kbuild=$build kfilter=$filter kleave=
	case "$k" in
	*-arm64)
		kbuild=${VMTEST_ARM64_BUILD:-build-arm64}
		kfilter=${VMTEST_ARM64_FILTER:-$filter}
		kleave=${VMTEST_ARM64_LEAVE_OUT:-}
		;;
	esac
	if [ "$k" = host ]; then
		tests/vm/job.sh "$build" "$filter" "$out" || rc=1
	else
		kdir=$(tests/vm/kernel.sh "$k" "$kbuild/vmtest") || {
			echo "vmtest: cannot prepare kernel $k" | tee "$out/tests.txt"
			rc=1
			continue
		}
		# The job writes its results to the share, /run/vmtest in the guest.
		tests/vm/run.sh "$kdir" "$out" tests/vm/job.sh "$kbuild" "$kfilter" /run/vmtest "$kleave" 2>&1 |
			tee "$out/console.log"
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	fi
	echo $((SECONDS - start)) >"$out/seconds"
done
python3 tests/vm/summary.py "$results" "$@"
exit $rc
