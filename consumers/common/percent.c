// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include "percent.h"

void percent__format(char *buf, size_t len, double fraction)
{
	double pct = fraction * 100;

	if (pct == 0 || pct >= 0.1)
		snprintf(buf, len, "%.1f%%", pct);
	else if (pct >= 0.001)
		snprintf(buf, len, "%.2g%%", pct);
	else /* %g would turn to exponents */
		snprintf(buf, len, "<0.001%%");
}
