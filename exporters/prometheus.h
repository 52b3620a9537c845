/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The prometheus sink's pieces other files need: the listen address
 * syntax, checked when the config is read. */
#ifndef KMON_PROMETHEUS_H
#define KMON_PROMETHEUS_H

#include <stddef.h>

#define PROMETHEUS_DEFAULT_LISTEN "127.0.0.1:9464"
#define PROMETHEUS_HOST_MAX 256

/* "host:port" or "[v6]:port" -> host (brackets stripped) and port (1 ..
 * 65535, digits). Returns 0, or -1 with why. */
int prometheus__parse_listen(const char *s, char *host, size_t hostlen,
			     char *port, size_t portlen, char *why,
			     size_t whylen);

#endif
