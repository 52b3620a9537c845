#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Proves a tree cross-builds for arm64 from nothing (make cross-check):
#   scripts/cross-check.sh OUT
# builds kmond, the consumers, the unit tests and the test helpers with
# make ARCH=arm64 into an emptied OUT, then checks what came out: every
# program an AArch64 ELF, every BPF object an eBPF ELF whose code
# llvm-objdump disassembles and whose BTF bpftool reads, and the syscall
# table arm64's (its generic table starts with io_setup, x86's with read).
set -euo pipefail
out=$1
bpftool=$(PATH="$PATH:/usr/sbin:/sbin" command -v bpftool)
failed=0

fail() {
	echo "cross-check: $*" >&2
	failed=1
}

rm -rf "$out"
make --no-print-directory -j2 ARCH=arm64 OUT="$out"

machine_of() {
	readelf -h "$1" | sed -n 's/^ *Machine: *//p'
}

# The programs are the files without a dot (objects are .o, dependencies .d).
mapfile -t programs < <(find "$out" "$out/tests" -maxdepth 1 -type f \
	! -name '*.*' | sort)
for bin in "${programs[@]}"; do
	[ "$(machine_of "$bin")" = AArch64 ] || fail "$bin: not AArch64 ($(machine_of "$bin"))"
done

objects=("$out"/bpf/*.bpf.o "$out"/bpf/*/*.bpf.o)
for obj in "${objects[@]}"; do
	[ "$(machine_of "$obj")" = "Linux BPF" ] || fail "$obj: not BPF"
	llvm-objdump -d "$obj" >/dev/null || fail "$obj: llvm-objdump cannot read it"
	"$bpftool" btf dump file "$obj" >/dev/null || fail "$obj: bpftool cannot read its BTF"
done

grep -q '\[0\] = "io_setup"' "$out/syscall_table.h" ||
	fail "$out/syscall_table.h is not arm64's"

[ $failed -eq 0 ] || exit 1
echo "cross-check: ${#programs[@]} AArch64 programs, ${#objects[@]} BPF objects in $out"
