/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmond's one out-of-memory policy: a daemon that cannot get a few bytes
 * of heap has nothing sensible left to do, so these never return NULL;
 * they log and abort. Callers need no NULL checks. */
#ifndef KMON_XALLOC_H
#define KMON_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
