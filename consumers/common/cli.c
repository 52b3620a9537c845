// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>

#include "consumers/common/cli.h"
#include "lib/duration.h"

int cli__duration(const char *s, uint64_t *ns)
{
	uint64_t v;

	if (duration__parse(s, DURATION_ARG, &v) || !v ||
	    v > CLI_MAX_DURATION_NS)
		return -EINVAL;
	*ns = v;
	return 0;
}

void cli__deprecated(const char *prog, const char *old, const char *now)
{
	fprintf(stderr,
		"%s: %s is deprecated and will be removed in the next release; "
		"use %s\n",
		prog, old, now);
}
