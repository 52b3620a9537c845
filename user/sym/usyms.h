/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* User-space symbolization: an address in a process -> its mapping
 * (/proc/PID/maps) -> the file offset -> the ELF virtual address (through
 * the PT_LOAD segment holding it, so PIE and shared objects, whatever
 * their load bias, read like fixed executables) -> the function in the
 * binary's .symtab or .dynsym. Symbol tables are cached per binary (by
 * device, inode and mtime, so a rebuilt binary is read again) and shared
 * between processes; a process's mappings are cached until it is
 * forgotten. */
#ifndef KMON_USYMS_H
#define KMON_USYMS_H

#include <stddef.h>
#include <stdint.h>

/* One binary's function symbols and loadable segments. */
struct elf_syms;

/* Reads the ELF file open at fd (NULL with errno set if it is not one).
 * A binary without symbols gives an empty table, not an error. */
struct elf_syms *elf_syms__read(int fd);
void elf_syms__free(struct elf_syms *es); /* NULL-safe */
size_t elf_syms__count(const struct elf_syms *es);
/* The ELF virtual address at file offset off; -1 when no PT_LOAD segment
 * holds it. */
int elf_syms__vaddr(const struct elf_syms *es, uint64_t off, uint64_t *vaddr);
/* The function holding vaddr and *off from its start; NULL when none does
 * (between functions, or past the last one's size). */
const char *elf_syms__find(const struct elf_syms *es, uint64_t vaddr,
			   uint64_t *off);

struct usyms;

/* max_binaries bounds the symbol tables kept when no process uses them. */
struct usyms *usyms__new(size_t max_binaries);
void usyms__free(struct usyms *u); /* NULL-safe */

/* Writes "function+0xoff", or "[unknown] module+0xoff" (the mapping's file
 * name and offset in it) when the binary has no symbol for it, or
 * "[unknown] 0xaddr" outside any file mapping. Returns what snprintf
 * returns. */
int usyms__format(struct usyms *u, uint32_t pid, uint64_t addr, char *buf,
		  size_t len);
/* The process exited (or its mappings changed): drop its mappings. */
void usyms__forget(struct usyms *u, uint32_t pid);
/* Once per interval: a process whose address missed every mapping may
 * read its maps again (dlopen) at most once per tick; exited processes
 * are forgotten and unused binaries beyond the bound freed. */
void usyms__tick(struct usyms *u);
size_t usyms__binaries(const struct usyms *u); /* cached symbol tables */

#endif
