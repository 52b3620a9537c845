// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: any bytes as a config file. The parser must accept or
 * refuse with a "file:line:col: " message, never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[1024];

	if (config__parse(&cfg, "f.yaml", (const char *)data, size, err,
			  sizeof(err)) == 0) {
		config__free(&cfg);
		return 0;
	}
	if (strncmp(err, "f.yaml:", 7) != 0)
		abort(); /* an error without its position */
	return 0;
}
