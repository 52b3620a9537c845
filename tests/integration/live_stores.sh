#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The control values kmond writes into a running BPF program's .bss/.data
# are written as the source says: bio's `slow_on = 0; slow_ns = ..;
# slow_on = ..` is three stores (plain stores compile to two, and the
# kernel could judge an I/O by half a threshold), and syscall's filter is
# switched off before its list is rewritten.
source "$(dirname "$0")/../lib/kmond.sh"

# stores OBJECT FUNCTION: the instructions of FUNCTION that write memory.
stores() {
	objdump -d --no-show-raw-insn --disassemble="$2" "$1" |
		grep -E '^\s+[0-9a-f]+:\s+mov[a-z]*\s+[^,]+,[-0-9a-fx]*\(%' || true
}

bio=$(stores "$BUILD/user/collectors/bio.o" bio_apply)
echo "$bio"
expect_eq "stores in bio_apply" "$(echo "$bio" | grep -c .)" 3

# The switch goes off (a store of 0) before the list is cleared (rep stos
# or a call to memset), and on again after it.
sys=$(objdump -dr --no-show-raw-insn --disassemble=syscall_apply \
	"$BUILD/user/collectors/syscall.o")
first_zero=$(echo "$sys" | grep -nE 'mov[a-z]*\s+\$0x0,\(%' | head -1 | cut -d: -f1)
# (-r: an object's calls name their target only in their relocation)
clear=$(echo "$sys" | grep -nE 'rep stos|R_X86_64_PLT32\s+(__asan_)?memset' | head -1 | cut -d: -f1)
[ -n "$first_zero" ] && [ -n "$clear" ] && [ "$first_zero" -lt "$clear" ] ||
	fail "syscall_apply does not switch the filter off before clearing its list"
echo "ok: syscall_apply switches the filter off (line $first_zero) before clearing the list (line $clear)"
