/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel symbolization from /proc/kallsyms. */
#ifndef KMON_KSYMS_H
#define KMON_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's own limit (KSYM_NAME_LEN, 512 since 6.1); anything longer
 * is not a name kallsyms can produce, so the line is malformed. */
#define KSYM_NAME_MAX 512

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* without brackets; NULL for vmlinux symbols */
	char type; /* kallsyms type letter: 'T', 't', 'D', ... */
};

struct ksyms;

/* Loads path (NULL = "/proc/kallsyms"). Malformed lines are skipped and
 * counted, never fatal: one odd line must not cost all symbolization.
 * Zero addresses (kptr_restrict, or not root) are skipped too, so an
 * unprivileged load yields an empty table, not a wrong one; check
 * ksyms__count(). Returns NULL with errno set if the file cannot be read
 * or memory runs out. */
struct ksyms *ksyms__load(const char *path);
void ksyms__free(struct ksyms *ks);
/* /proc/kallsyms, loaded once for the whole process and shared: each
 * ksyms__get() (NULL when it cannot be read) is paired with a
 * ksyms__put(); the last put frees the table. */
const struct ksyms *ksyms__get(void);
void ksyms__put(const struct ksyms *ks);
/* A collector that names kernel stacks asks for the table at its start
 * (ksyms__want); ksyms__preload(), once every collector has started and
 * before any event is read, loads it: by then kmond's programs are loaded
 * (so they are in it) and the kernel BTF each load parses (~11 MiB) is
 * freed, where loading it in a start held both (kmond's peak RSS). The
 * table stays until ksyms__unload(). */
void ksyms__want(void);
void ksyms__preload(void);
void ksyms__unload(void);
/* The shared table the first time a collector needs it (*ks stays NULL
 * when there is none: logged once, naming who); pair with ksyms__put(*ks). */
const struct ksyms *ksyms__need(const struct ksyms **ks, bool *tried,
				const char *who);

size_t ksyms__count(const struct ksyms *ks);
size_t ksyms__bad_lines(const struct ksyms *ks);

/* The symbol with the greatest start <= addr; NULL below the first symbol
 * (or for an empty/NULL table). Among aliases at one address, the first in
 * file order wins, so results are stable across loads. */
const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr);

/* Writes "symbol+0xoff" (lowercase hex, "+0x0" at the start) or
 * "[unknown] 0x<addr>" into buf. Returns what snprintf returns: the full
 * length, which is >= len when the output was truncated. */
int ksyms__format(const struct ksyms *ks, uint64_t addr, char *buf, size_t len);

#endif
