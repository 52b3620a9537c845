/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Logging to stderr, "kmond: " first; -v shows debug lines. */
#ifndef KMON_LOG_H
#define KMON_LOG_H

#include <stdbool.h>

extern bool log_verbose;

void log_msg(const char *level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg("error: ", __VA_ARGS__)
#define log_warn(...) log_msg("warning: ", __VA_ARGS__)
#define log_info(...) log_msg("", __VA_ARGS__)
#define log_debug(...)                            \
	do {                                      \
		if (log_verbose)                  \
			log_msg("", __VA_ARGS__); \
	} while (0)

#endif
