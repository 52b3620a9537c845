/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where named functions are in an ELF file: the file offsets a uprobe
 * goes on, read from its symbol tables (.symtab and .dynsym), as libbpf
 * finds them for a uprobe named by its function. */
#ifndef KMON_TLS_SYMBOLS_H
#define KMON_TLS_SYMBOLS_H

#include <stdint.h>

#include <libelf.h>

/* offs[i]: the offset of names[i] defined in elf, 0 if it is not.
 * Returns how many of the n it defines. */
int elf_funcs__offsets(Elf *elf, const char *const names[], int n,
		       uint64_t offs[]);
/* The same for the file at path: -errno if it is no ELF file. */
int elf_funcs__file_offsets(const char *path, const char *const names[], int n,
			    uint64_t offs[]);

#endif
