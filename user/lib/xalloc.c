// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

static void *checked(void *p)
{
	if (!p) {
		fprintf(stderr, "%s: out of memory\n",
			program_invocation_short_name);
		abort();
	}
	return p;
}

void *xmalloc(size_t size)
{
	return checked(malloc(size ? size : 1));
}

void *xcalloc(size_t n, size_t size)
{
	return checked(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t size)
{
	return checked(realloc(p, size ? size : 1));
}

char *xstrdup(const char *s)
{
	return checked(strdup(s));
}

char *xstrndup(const char *s, size_t n)
{
	return checked(strndup(s, n));
}
