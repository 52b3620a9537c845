// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Function offsets from ELF symbol tables (see tls_symbols.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "collectors/tcp/tls_symbols.h"

/* A defined function's file offset: its address less its section's
 * address, plus that section's place in the file. 0: not one. */
static uint64_t file_offset(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	scn = elf_getscn(elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr)
		return 0;
	return sym->st_value - sh.sh_addr + sh.sh_offset;
}

static int index_of(const char *name, const char *const names[], int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

/* Fills what the table at scn defines of names and offs leaves at 0. */
static void read_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       const char *const names[], int n, uint64_t offs[])
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	GElf_Sym sym;
	int i;

	if (!data || !sh->sh_entsize)
		return;
	for (size_t s = 0; s < sh->sh_size / sh->sh_entsize; s++) {
		if (!gelf_getsym(data, (int)s, &sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && (i = index_of(name, names, n)) >= 0 && !offs[i])
			offs[i] = file_offset(elf, &sym);
	}
}

int elf_funcs__offsets(Elf *elf, const char *const names[], int n,
		       uint64_t offs[])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int found = 0;

	memset(offs, 0, (size_t)n * sizeof(*offs));
	while ((scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh))
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			read_table(elf, scn, &sh, names, n, offs);
	for (int i = 0; i < n; i++)
		found += offs[i] != 0;
	return found;
}

int elf_funcs__file_offsets(const char *path, const char *const names[], int n,
			    uint64_t offs[])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = -ENOEXEC;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		found = elf_funcs__offsets(elf, names, n, offs);
	elf_end(elf);
	close(fd);
	return found;
}
