/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which file holds a process's OpenSSL functions, for the uprobes of TLS
 * in plaintext (tls_attach.c): the libssl.so.3 it maps; or, right after
 * its exec, before its dynamic linker ran, the libssl.so.3 that linker
 * will map (found through the DT_NEEDED of its program and libraries);
 * or its program itself, when OpenSSL is linked into it. */
#ifndef KMON_TLS_TARGET_H
#define KMON_TLS_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_LIB "libssl.so.3"

struct tls_targets;

struct tls_targets *tls_targets__new(void);
void tls_targets__free(struct tls_targets *t); /* NULL-safe */
/* The file of pid's SSL functions, as a path inside pid's root in rel
 * ("" for its program). -ENOENT: none; -ESRCH: pid is gone. What a
 * program links is read once per program (and root). */
int tls_targets__find(struct tls_targets *t, uint32_t pid, char *rel,
		      size_t len);
/* The same from pid's program alone, whatever it maps now. */
int tls_targets__linked(struct tls_targets *t, uint32_t pid, char *rel,
			size_t len);
/* The path kmond opens for rel of pid (/proc/PID/root/..., or
 * /proc/PID/exe). False: too long. */
bool tls_target_path(uint32_t pid, const char *rel, char *path, size_t len);

#endif
