/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Orders for qsort and bsearch. */
#ifndef KMON_COMPARE_H
#define KMON_COMPARE_H

#include <stdint.h>

/* Two uint64_t, ascending. */
static inline int u64_compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

#endif
