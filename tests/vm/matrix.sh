#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest: the tests on each kernel, then one summary table (per
# kernel and collector: the attach kmond chose, tests passed, failed and
# skipped) and the wall time per kernel.
#   tests/vm/matrix.sh BUILD_DIR FILTER KERNEL...
# KERNEL is "host" (this machine's kernel) or a name tests/vm/kernel.sh
# knows (6.1, 6.1-rt, 6.12, 6.1-arm64). Results stay in
# BUILD_DIR/vmtest/results/ (or VMTEST_RESULTS). An arm64 kernel runs the
# cross-built tree, VMTEST_ARM64_BUILD (build-arm64), and the tests
# VMTEST_ARM64_FILTER picks (the Makefile's core set; FILTER otherwise)
# but VMTEST_ARM64_LEAVE_OUT; its kernel and root are cached there.
# The kernels are made ready one after another (kernel.sh fetches with
# apt), "host" runs alone, then up to VMTEST_JOBS guests at once (by
# default one per host CPU: a guest's vCPUs take turns on one host
# thread, run.sh). With one at a time a guest's console is shown as it
# goes, else when the guest ends.
set -u
cd "$(dirname "$0")/../.."
build=$1
filter=$2
shift 2
results=${VMTEST_RESULTS:-$build/vmtest/results}
jobs=${VMTEST_JOBS:-$(nproc)}
rc=0
# The guests have no network: the npm package the trace tests read is
# installed here first, into the build dir they see read-only.
if [ -n "$(printf '%s\n' "$@" | grep -v -e '^host$' -e '-arm64$')" ]; then
	BUILD=$build bash -c 'source tests/lib/kmond.sh && source tests/lib/otlp.sh && otlp_setup' ||
		echo "vmtest: the OTLP package is not installed; the trace tests will fail in guests"
fi

# tree_of K: the build dir kernel K runs (an arm64 kernel: the cross-built one)
tree_of() {
	case "$1" in
	*-arm64) echo "${VMTEST_ARM64_BUILD:-build-arm64}" ;;
	*) echo "$build" ;;
	esac
}

# guest K KDIR: K's tests in a guest booted from KDIR, its console in the
# results and on stdout; the exit code is the tests'.
guest() {
	local k=$1 kdir=$2 out=$results/$1 start=$SECONDS kfilter=$filter kleave='' guest_rc
	case "$k" in
	*-arm64)
		kfilter=${VMTEST_ARM64_FILTER:-$filter}
		kleave=${VMTEST_ARM64_LEAVE_OUT:-}
		;;
	esac
	# The job writes its results to the share, /run/vmtest in the guest.
	local job=(tests/vm/job.sh "$(tree_of "$k")" "$kfilter" /run/vmtest "$kleave")
	if [ "$live" = 1 ]; then
		echo "=== $k"
		tests/vm/run.sh "$kdir" "$out" "${job[@]}" 2>&1 | tee "$out/console.log"
		guest_rc=${PIPESTATUS[0]}
	else
		tests/vm/run.sh "$kdir" "$out" "${job[@]}" >"$out/console.log" 2>&1
		guest_rc=$?
		# one console at a time, though two guests may end together
		{
			flock 9
			echo "=== $k (ended after $((SECONDS - start)) s)"
			cat "$out/console.log"
		} 9>>"$results/.print.lock"
	fi
	echo $((SECONDS - start)) >"$out/seconds"
	return "$guest_rc"
}

declare -A kdir
guests=()
for k in "$@"; do
	out=$results/$k
	rm -rf "$out"
	mkdir -p "$out"
	if [ "$k" = host ]; then
		echo "=== host"
		start=$SECONDS
		tests/vm/job.sh "$build" "$filter" "$out" || rc=1
		echo $((SECONDS - start)) >"$out/seconds"
	elif kdir[$k]=$(tests/vm/kernel.sh "$k" "$(tree_of "$k")/vmtest"); then
		guests+=("$k")
	else
		echo "vmtest: cannot prepare kernel $k" | tee "$out/tests.txt"
		rc=1
	fi
done
live=0
[ "$jobs" -le 1 ] || [ "${#guests[@]}" -le 1 ] && live=1
running=0
for k in "${guests[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || rc=1
		running=$((running - 1))
	fi
	[ "$live" = 1 ] || echo "=== $k (started)"
	guest "$k" "${kdir[$k]}" &
	running=$((running + 1))
done
for ((; running > 0; running--)); do
	wait -n || rc=1
done
python3 tests/vm/summary.py "$results" "$@"
exit $rc
