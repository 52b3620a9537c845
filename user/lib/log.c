// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"

bool log_verbose;

void log_msg(const char *level, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kmond: %s", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
