#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The orderings kmond's programs rely on are in the instructions the
# kernel runs (docs/design/arm64.md): the syscall slots' seq_bump and
# offcpu's pin_add are fetching adds after clang (a plain add, its result
# unused, would be a BPF add without BPF_FETCH), and the tcp load ends
# its requests with compare-and-swap; on arm64 the JIT made every
# fetching atomic one that orders both ways (LDADDAL, SWPAL, CASAL or an
# exclusive loop with a DMB after it), never a STADD. An arm64 guest on
# an x86 host cannot show a missing order (the host's memory keeps
# stores in order, and TCG makes every guest atomic a locked host one):
# this checks the cause instead of the outcome.
source "$(dirname "$0")/../lib/kmond.sh"

cat >"$WORK/kmond.yaml" <<YAML
interval: 500ms
collectors:
  syscall: { enabled: true }
  offcpu: { enabled: true }
  tcp: { enabled: true }
YAML
start_kmond "$WORK/kmond.yaml"
arm64=0
[ "$(uname -m)" = aarch64 ] && arm64=1
# shellcheck disable=SC2046 # one argument per id
python3 tests/lib/jit_atomics.py $(prog_ids "$KMOND_PID") >"$WORK/atomics.txt" ||
	fail "cannot read the programs' instructions"
stop_kmond
cat "$WORK/atomics.txt"

# count FIELD NAME_PATTERN: FIELD summed over the programs whose name
# matches
count() {
	awk -v f="$1" -v p="$2" '$1 ~ p {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) n += kv[2] }
	} END { print n + 0 }' "$WORK/atomics.txt"
}
# two seq_bumps in each syscall program (one per attach method named
# sys_enter_*), one pin_add at least in offcpu's sched_switch program
for p in $(awk '$1 ~ /^sys_enter/ { print $1 }' "$WORK/atomics.txt"); do
	[ "$(count fetching "^$p\$")" -ge 2 ] || fail "$p: fewer than two fetching adds (seq_bump)"
done
[ "$(count fetching '^sys_enter')" -ge 2 ] || fail "no syscall program with its seq_bumps"
[ "$(count fetching '^offcpu_switch')" -ge 1 ] ||
	fail "offcpu's sched_switch has no fetching add (pin_add)"
[ "$(count fetching '.')" -gt "$(count fetching '^(sys_enter|offcpu_switch)')" ] ||
	fail "no fetching atomic in tcp's programs (the load's compare-and-swap)"
if [ $arm64 = 0 ]; then
	echo "ok: the fetching atomics are there ($(uname -m): the JIT's locked instructions order all)"
	exit 0
fi
# every fetching atomic ordered both ways, and no program without one
while read -r name fetching plain ordered unordered; do
	[ "${ordered#*=}" = "${fetching#*=}" ] ||
		fail "$name: ${fetching#*=} fetching atomics, ${ordered#*=} ordered instructions in its JIT image"
	[ "${unordered#*=}" = "${plain#*=}" ] ||
		fail "$name: ${plain#*=} plain atomics, ${unordered#*=} unordered ones in its JIT image"
done <"$WORK/atomics.txt"
echo "ok: every fetching atomic is ordered both ways in the arm64 JIT"
