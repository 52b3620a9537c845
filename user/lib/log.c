// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"

bool log_verbose;

void log_msg(const char *level, const char *fmt, ...)
{
	char line[1024];
	int n;
	va_list ap;

	/* One write per line: librdkafka's threads log too. */
	n = snprintf(line, sizeof(line), "kmond: %s", level);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
}
